//go:build unix && !solaris && !aix

package sessionfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveRefusesAHeldSessionAndRemovesAFreeOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{CWD: "/"})
	if err := f.Save(sample()); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("Remove of a held session: %v, want ErrLocked", err)
	}
	if got := mustLoad(t, path); len(got) != len(sample()) {
		t.Fatalf("the held session lost messages: %d left", len(got))
	}
	f.Close()
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".lock"} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s after Remove: %v", p, err)
		}
	}
	if err := Remove(path); err != nil {
		t.Errorf("Remove of a session with no file: %v", err)
	}
}
