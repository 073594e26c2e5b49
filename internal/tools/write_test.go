package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCreatesAndOverwrites(t *testing.T) {
	dir := t.TempDir()
	wr := toolByName(t, Config{CWD: dir}, "write")
	content := "secret-ish body\nline two\n"
	got := wantOK(t, runTool(t, wr, map[string]any{"path": "deep/er/new.txt", "content": content}))
	if got != "wrote 25 bytes (2 lines) to deep/er/new.txt (created)" {
		t.Errorf("summary = %q", got)
	}
	if strings.Contains(got, "secret-ish") {
		t.Error("summary echoes the content")
	}
	p := filepath.Join(dir, "deep", "er", "new.txt")
	if b, err := os.ReadFile(p); err != nil || string(b) != content {
		t.Fatalf("content = %q, %v", b, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode = %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Dir(p)); st.Mode().Perm() != 0o755 {
		t.Errorf("new dir mode = %v", st.Mode().Perm())
	}

	// Overwrite an executable: the mode stays, the file is replaced by
	// rename (new inode), and no temporary file is left behind.
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("old"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(script, 0o750); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(script)
	got = wantOK(t, runTool(t, wr, map[string]any{"path": script, "content": "#!/bin/sh\necho hi"}))
	if got != "wrote 17 bytes (2 lines) to run.sh (overwritten)" {
		t.Errorf("summary = %q", got)
	}
	after, _ := os.Stat(script)
	if after.Mode().Perm() != 0o750 {
		t.Errorf("mode after overwrite = %v, want 0750", after.Mode().Perm())
	}
	if os.SameFile(before, after) {
		t.Error("file was rewritten in place, not replaced atomically")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestWriteEmptyContentAndErrors(t *testing.T) {
	dir := t.TempDir()
	wr := toolByName(t, Config{CWD: dir}, "write")
	if got := wantOK(t, runTool(t, wr, map[string]any{"path": "e", "content": ""})); got != "wrote 0 bytes (0 lines) to e (created)" {
		t.Errorf("summary = %q", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr(t, runTool(t, wr, map[string]any{"path": "d", "content": "x"}), "cannot write d", "directory")
	wantErr(t, runTool(t, wr, map[string]any{"path": "", "content": "x"}), `"path" must not be empty`)
}

func TestWriteThroughSymlinkKeepsLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.txt")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("real.txt", link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "write"), map[string]any{"path": "link.txt", "content": "new"}))
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced by a file: %v %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target content = %q", b)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("target mode = %v", st.Mode().Perm())
	}
}
