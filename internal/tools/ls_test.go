package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"b.txt":     "b",
		"a.txt":     "a",
		"sub/x":     "x",
		".hidden":   "h",
		".config/y": "y",
		"Zeta.md":   "z",
	})
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	ls := toolByName(t, Config{CWD: dir}, "ls")
	got := wantOK(t, runTool(t, ls, map[string]any{}))
	if want := "Zeta.md\na.txt\nb.txt\nlink -> a.txt\nsub/"; got != want {
		t.Errorf("ls:\n%s\nwant:\n%s", got, want)
	}
	got = wantOK(t, runTool(t, ls, map[string]any{"path": ".", "all": true}))
	if want := ".config/\n.hidden\nZeta.md\na.txt\nb.txt\nlink -> a.txt\nsub/"; got != want {
		t.Errorf("ls all:\n%s\nwant:\n%s", got, want)
	}
	if got := wantOK(t, runTool(t, ls, map[string]any{"path": "sub"})); got != "x" {
		t.Errorf("ls sub: %q", got)
	}
	wantErr(t, runTool(t, ls, map[string]any{"path": "a.txt"}), "not a directory", "read")
	wantErr(t, runTool(t, ls, map[string]any{"path": "missing"}), "missing", "no such file")
}

func TestLsCapsEntries(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < lsMaxEntries+5; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "ls"), map[string]any{}))
	lines := strings.Split(got, "\n")
	if len(lines) != lsMaxEntries+1 || lines[lsMaxEntries] != "[5 more entries not shown; 1000 of 1005 listed]" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
