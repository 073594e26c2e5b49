package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Write creates the missing directory, writes the file with mode 0600,
// replaces an existing file whole, and leaves no temporary file behind.
func TestWriteReplacesWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "f.json")
	if err := Write(path, []byte("first, and longer\n")); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("second\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "second\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v), want only f.json", entries, err)
	}
}

// A failed rename (here: path is a non-empty directory) leaves what was
// at path untouched and no temporary file.
func TestWriteFailureLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("x")); err == nil {
		t.Fatal("writing over a non-empty directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "f" || !entries[0].IsDir() {
		t.Fatalf("directory holds %v (%v), want only the directory f", entries, err)
	}
}
