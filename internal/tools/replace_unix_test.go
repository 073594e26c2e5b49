//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// oneEdit is edit's arguments for one replacement in path.
func oneEdit(path, oldText, newText string) map[string]any {
	return map[string]any{"path": path, "edits": []map[string]string{{"old_text": oldText, "new_text": newText}}}
}

// ownerOf returns the user and group owning path.
func ownerOf(t *testing.T, path string) (uid, gid uint32) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	return sys.Uid, sys.Gid
}

// wantContent fails unless path holds want.
func wantContent(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("%s holds %q (%v), want %q", path, b, err, want)
	}
}

// wantNoTemporaries fails if a temporary file of write or edit is left in dir.
func wantNoTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".zot-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// rootFile makes dir/name owned by root with mode perm.
func rootFile(t *testing.T, dir, name, content string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteAndEditRefuseAFileTheUserMayNotWrite(t *testing.T) {
	// The directory lets nobody create and rename files, but the file
	// itself is root's and read-only to others: replacing it by rename
	// would get round its permissions.
	for _, perm := range []os.FileMode{0o777, 0o755} {
		dir := sharedTempDir(t, perm)
		p := rootFile(t, dir, "root.txt", "original\n", 0o644)
		wantErr(t, runAsNobody(t, dir, "write", map[string]any{"path": "root.txt", "content": "replaced\n"}),
			"cannot write root.txt", "permission denied")
		wantErr(t, runAsNobody(t, dir, "edit", oneEdit("root.txt", "original", "edited")),
			"cannot write root.txt", "permission denied")
		wantContent(t, p, "original\n")
		if uid, _ := ownerOf(t, p); uid != 0 {
			t.Errorf("dir %v: owner is now %d", perm, uid)
		}
		wantNoTemporaries(t, dir)
	}
}

func TestWriteAndEditKeepTheOwnerOfAFileOthersMayWrite(t *testing.T) {
	// nobody may write root's file but cannot give a new file to root, so
	// the file is rewritten in place rather than replaced by one nobody owns.
	dir := sharedTempDir(t, 0o777)
	p := rootFile(t, dir, "shared.txt", "one\n", 0o666)
	got := wantOK(t, runAsNobody(t, dir, "write", map[string]any{"path": "shared.txt", "content": "two\n"}))
	if !strings.Contains(got, "in place") {
		t.Errorf("write result does not say it wrote in place: %q", got)
	}
	wantOK(t, runAsNobody(t, dir, "edit", oneEdit("shared.txt", "two", "three")))
	wantContent(t, p, "three\n")
	if uid, gid := ownerOf(t, p); uid != 0 || gid != 0 {
		t.Errorf("owner is now %d:%d, want 0:0", uid, gid)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o666 {
		t.Errorf("mode is now %v", st.Mode().Perm())
	}
	wantNoTemporaries(t, dir)
}

func TestWriteAndEditAsRootKeepOwnerAndMode(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "theirs.txt")
	if err := os.WriteFile(p, []byte("one\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	// Held open, the old file keeps its inode number from being reused by
	// a new one, which would make the two look the same file.
	held, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "write"), map[string]any{"path": "theirs.txt", "content": "two\n"}))
	wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "edit"), oneEdit("theirs.txt", "two", "three")))
	wantContent(t, p, "three\n")
	if uid, gid := ownerOf(t, p); uid != nobody || gid != nobody {
		t.Errorf("owner is now %d:%d, want %d:%d", uid, gid, nobody, nobody)
	}
	after, _ := os.Stat(p)
	if after.Mode() != before.Mode() {
		t.Errorf("mode is now %v, want %v", after.Mode(), before.Mode())
	}
	if os.SameFile(before, after) {
		t.Error("the file was rewritten in place, not replaced")
	}
}

func TestWriteAndEditKeepHardLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "b.txt")
	if err := os.Link(p, other); err != nil {
		t.Skip("hard links unavailable:", err)
	}
	before, _ := os.Stat(p)
	got := wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "write"), map[string]any{"path": "a.txt", "content": "two\n"}))
	if got != "wrote 4 bytes (1 lines) to a.txt (overwritten in place to keep its 2 hard links)" {
		t.Errorf("write result = %q", got)
	}
	wantContent(t, other, "two\n")
	got = wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "edit"), oneEdit("b.txt", "two", "three")))
	if !strings.HasPrefix(got, "applied 1 edit to b.txt (+1 -1 lines; written in place to keep its 2 hard links)\n") {
		t.Errorf("edit result = %q", got)
	}
	wantContent(t, p, "three\n")
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Error("a.txt is no longer the file b.txt names")
	}
	wantNoTemporaries(t, dir)
}

func TestWriteRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := specialTree(t)
	cases := []struct{ path, kind string }{
		{"pipe", "is a named pipe"},
		{"pipe-link", "is a named pipe"},
		{"sock", "is a socket"},
	}
	if os.Geteuid() == 0 {
		// A device of its own, so that a write that replaced it would not
		// take the machine's /dev/null.
		if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			cases = append(cases, struct{ path, kind string }{"null", "is a character device"})
		}
	}
	wr := toolByName(t, Config{CWD: dir}, "write")
	for _, c := range cases {
		before, err := os.Stat(filepath.Join(dir, c.path))
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, runBounded(t, context.Background(), wr, map[string]any{"path": c.path, "content": "x"}),
			"cannot write "+c.path, c.kind, "only regular files")
		after, err := os.Stat(filepath.Join(dir, c.path))
		if err != nil || after.Mode().Type() != before.Mode().Type() {
			t.Errorf("%s is now %v (%v)", c.path, after.Mode().Type(), err)
		}
	}
	wantNoTemporaries(t, dir)
}

func TestWriteRefusesADanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("sub/missing.txt", link); err != nil {
		t.Fatal(err)
	}
	wantErr(t, runTool(t, toolByName(t, Config{CWD: dir}, "write"), map[string]any{"path": "link.txt", "content": "x"}),
		"cannot write link.txt", "symbolic link to sub/missing.txt", "does not exist")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced: %v %v", st.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "sub")); err == nil {
		t.Error("the link's target directory was created")
	}
	wantNoTemporaries(t, dir)
}
