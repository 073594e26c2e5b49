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

func TestDirMarks(t *testing.T) {
	ctx := context.Background()
	d := Dir(t.TempDir())
	if ref, err := d.Marked(ctx, "step-1"); err != nil || ref != "" {
		t.Fatalf("Marked before Mark = %q, %v", ref, err)
	}
	if err := d.Mark(ctx, "step-1", "sha256:ab"); err != nil {
		t.Fatal(err)
	}
	if ref, err := d.Marked(ctx, "step-1"); err != nil || ref != "sha256:ab" {
		t.Fatalf("Marked = %q, %v", ref, err)
	}
	for _, bad := range []string{"", "../x", ".hidden", "a/b"} {
		if err := d.Mark(ctx, bad, "sha256:ab"); err == nil {
			t.Errorf("Mark(%q) succeeded", bad)
		}
	}
}
