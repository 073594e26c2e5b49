//go:build unix

package sessionfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A session file that is a device, a named pipe or too big is refused at
// once: reading /dev/zero or /dev/full to its end, or waiting for a pipe's
// writer, would take all memory or hang.
func TestSessionFileMustBeRegularAndBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxFileBytes+1); err != nil { // sparse
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{"/dev/null", "not a regular file"},
		{fifo, "not a regular file"},
		{dir, "not a regular file"},
		{huge, "larger than"},
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := Load(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load(%s) = %v, want an error saying %q", c.path, err, c.want)
			}
			s, _, err := Open(c.path, Options{})
			if err == nil {
				s.Close()
			}
			if _, serr := os.Stat(c.path + ".lock"); serr == nil && !strings.HasPrefix(c.path, dir) {
				t.Errorf("Open(%s) made %s.lock", c.path, c.path)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open(%s) = %v, want an error saying %q", c.path, err, c.want)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("loading %s blocks", c.path)
		}
	}
}
