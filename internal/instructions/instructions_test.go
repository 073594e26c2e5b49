package instructions

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestLoad: outside a repository only the working directory's file is
// read; AGENTS.md wins over CLAUDE.md; an empty file adds nothing.
func TestLoad(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "a", "b")
	for name, text := range map[string]string{
		"AGENTS.md":     "ABOVE\n",
		"a/b/AGENTS.md": "  \n",
		"a/b/CLAUDE.md": "CLAUDE\n",
	} {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := Dirs(cwd); !reflect.DeepEqual(got, []string{cwd}) {
		t.Errorf("Dirs outside a repository: %v", got)
	}
	set := Load(cwd, 0)
	if set.Text != "" || len(set.Files) != 1 || set.Files[0].Path != filepath.Join(cwd, "AGENTS.md") || set.Notice != "" {
		t.Errorf("%+v", set)
	}
	if err := os.Mkdir(filepath.Join(base, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Dirs(cwd); !reflect.DeepEqual(got, []string{cwd, filepath.Join(base, "a"), base}) {
		t.Errorf("Dirs in a repository: %v", got)
	}
	if set := Load(cwd, 0); set.Text != "Instructions from "+filepath.Join(base, "AGENTS.md")+":\n\nABOVE" {
		t.Errorf("text %q", set.Text)
	}
}
