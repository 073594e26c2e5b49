package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirBlobs(t *testing.T) {
	ctx := context.Background()
	d := Dir(t.TempDir())
	ref, err := d.Put(ctx, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Put(ctx, []byte("hello"))
	if err != nil || again != ref {
		t.Fatalf("second Put = %q, %v; want %q", again, err, ref)
	}
	got, err := d.Get(ctx, ref)
	if err != nil || string(got) != "hello" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if _, err := d.Get(ctx, "sha256:../../etc/passwd"); err == nil {
		t.Fatal("Get of a path that is no reference succeeded")
	}
	name := strings.TrimPrefix(ref, refPrefix)
	if err := os.WriteFile(filepath.Join(string(d), name[:2], name), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(ctx, ref); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("Get of a changed blob = %v, want an error", err)
	}
}

func TestDirRecords(t *testing.T) {
	ctx := context.Background()
	d := Dir(t.TempDir())
	if data, err := d.Recorded(ctx, "step-1"); err != nil || data != nil {
		t.Fatalf("Recorded before Record = %q, %v", data, err)
	}
	if err := d.Record(ctx, "step-1", []byte(`{"Action":"end_turn"}`)); err != nil {
		t.Fatal(err)
	}
	if data, err := d.Recorded(ctx, "step-1"); err != nil || string(data) != `{"Action":"end_turn"}` {
		t.Fatalf("Recorded = %q, %v", data, err)
	}
	for _, bad := range []string{"", "../x", ".hidden", "a/b"} {
		if err := d.Record(ctx, bad, []byte("x")); err == nil {
			t.Errorf("Record(%q) succeeded", bad)
		}
	}
}
