//go:build linux

package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"zot.dev/zot/internal/sandbox"
)

// TestWriteRacesSymlinkSwap: while another thread swaps a folder of the
// workspace with a symbolic link to a folder outside it (renameat2's
// RENAME_EXCHANGE, as fast as it can), write and edit of a file in that
// folder, many times over, under workspace-write, never write outside:
// each call writes inside, or is refused by the sandbox's check, or finds
// the link on its way and writes nothing. With openat2, and with the
// walk that takes its place on kernels without it.
func TestWriteRacesSymlinkSwap(t *testing.T) {
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	for _, way := range []string{"openat2", "O_NOFOLLOW walk"} {
		t.Run(way, func(t *testing.T) {
			if way != "openat2" {
				openat2Missing.Store(true)
				defer openat2Missing.Store(false)
			} else if _, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_RDONLY}); err != nil {
				t.Skipf("no openat2 here: %v", err)
			}
			base, _ := filepath.EvalSymlinks(t.TempDir())
			ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
			for _, d := range []string{filepath.Join(ws, "sub", "deep"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// The link leads to a folder outside holding what the file
			// would be, so that a write through it has somewhere to go.
			os.MkdirAll(filepath.Join(outside, "deep"), 0o755)
			if err := os.Symlink(outside, filepath.Join(ws, "swap")); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ws, "sub", "f"), []byte("start\n"), 0o644)
			os.WriteFile(filepath.Join(outside, "f"), []byte("start\n"), 0o644)
			g := sandbox.NewGuard(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws})
			cfg := Config{CWD: ws, Sandbox: g}
			write, edit := toolByName(t, cfg, "write"), toolByName(t, cfg, "edit")

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, b := filepath.Join(ws, "sub"), filepath.Join(ws, "swap")
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
						t.Errorf("exchange: %v", err)
						return
					}
				}
			}()
			wrote, refused := 0, 0
			for i := range iterations {
				var r Result
				switch i % 3 {
				case 0:
					r = runTool(t, write, map[string]any{"path": "sub/f", "content": "x\n"})
				case 1:
					r = runTool(t, write, map[string]any{"path": "sub/deep/new", "content": "x\n"})
				default:
					r = runTool(t, edit, map[string]any{"path": "sub/f", "edits": []map[string]any{{"oldText": "x", "newText": "x"}}})
				}
				if r.IsError {
					refused++
				} else {
					wrote++
				}
			}
			close(stop)
			wg.Wait()
			t.Logf("%d calls wrote, %d were refused or found nothing to edit", wrote, refused)
			if got, _ := os.ReadFile(filepath.Join(outside, "f")); string(got) != "start\n" {
				t.Errorf("the file outside was written: %q", got)
			}
			entries, _ := os.ReadDir(outside)
			deep, _ := os.ReadDir(filepath.Join(outside, "deep"))
			if len(entries) != 2 || len(deep) != 0 {
				var names []string
				for _, e := range append(entries, deep...) {
					names = append(names, e.Name())
				}
				t.Errorf("written outside the workspace: %s", strings.Join(names, ", "))
			}
			if wrote == 0 {
				t.Error("no call wrote: the test shows nothing")
			}
		})
	}
}

// TestWriteBeneathRefusesLinksOnTheWay: a symbolic link met on the way to
// a confined write (one leading out, an absolute one) fails it with an
// error that says so, whichever way the folders are opened; a relative
// link that stays beneath the root is followed with openat2.
func TestWriteBeneathRefusesLinksOnTheWay(t *testing.T) {
	for _, missing := range []bool{false, true} {
		openat2Missing.Store(missing)
		base, _ := filepath.EvalSymlinks(t.TempDir())
		root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		os.MkdirAll(filepath.Join(root, "in"), 0o755)
		os.MkdirAll(outside, 0o755)
		os.Symlink(outside, filepath.Join(root, "abs"))
		os.Symlink("../outside", filepath.Join(root, "up"))
		os.Symlink("in", filepath.Join(root, "rel"))
		for _, rel := range []string{"abs/f", "up/f", "abs/new/f"} {
			if _, err := writeBeneath(root, rel, []byte("x"), false); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("openat2 missing %v: %s: %v", missing, rel, err)
			}
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("openat2 missing %v: written outside: %v", missing, entries)
		}
		_, err := writeBeneath(root, "rel/f", []byte("x"), false)
		if missing != (err != nil) {
			t.Errorf("openat2 missing %v: a link staying beneath: %v", missing, err)
		}
		if how, err := writeBeneath(root, "in/new/deeper/f", []byte("x"), false); err != nil || !how.created || contentOf(filepath.Join(root, "in/new/deeper/f")) != "x" {
			t.Errorf("openat2 missing %v: new folders: %+v %v", missing, how, err)
		}
	}
	openat2Missing.Store(false)
}

// contentOf is what path holds, "" when it cannot be read.
func contentOf(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestWriteBeneathErrno: writeBeneath's errors wrap the system's, so a
// caller can tell them apart (errors.Is): a folder on the way that is a
// file, a writable folder that is gone.
func TestWriteBeneathErrno(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := writeBeneath(root, "file/x", []byte("y"), false); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("through a file: %v, want ENOTDIR", err)
	}
	if _, err := writeBeneath(filepath.Join(root, "gone"), "x", []byte("y"), false); !errors.Is(err, unix.ENOENT) {
		t.Errorf("a writable folder that is gone: %v, want ENOENT", err)
	}
}
