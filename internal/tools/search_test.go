package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// searchTree builds a tree with a git directory, ignore files at two
// levels, a binary file and ordinary sources.
func searchTree(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".git/config":         "needle in git\n",
		".gitignore":          "*.log\nbuild/\n/root-only.txt\n",
		"main.go":             "package main\n// needle one\nfunc main() {}\n",
		"notes.md":            "Needle upper\nnothing\n",
		"debug.log":           "needle in log\n",
		"build/out.go":        "needle in build\n",
		"root-only.txt":       "needle root only\n",
		"pkg/root-only.txt":   "needle not anchored here\n",
		"pkg/.gitignore":      "*.gen.go\n!keep.gen.go\n",
		"pkg/a.go":            "package pkg\n\nvar needle = 1\n",
		"pkg/x.gen.go":        "needle generated\n",
		"pkg/keep.gen.go":     "needle kept\n",
		"pkg/blob.bin":        "needle\x00binary\n",
		"pkg/deep/d.go":       "package deep // needle\n",
		"pkg/deep/more/e.txt": "needle e\n",
	})
	return dir
}

func TestGrepHonoursIgnoresAndSkips(t *testing.T) {
	dir := searchTree(t)
	gr := toolByName(t, Config{CWD: dir}, "grep")
	got := wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle"}))
	want := strings.Join([]string{
		"main.go:2:// needle one",
		"pkg/a.go:3:var needle = 1",
		"pkg/deep/d.go:1:package deep // needle",
		"pkg/deep/more/e.txt:1:needle e",
		"pkg/keep.gen.go:1:needle kept",
		"pkg/root-only.txt:1:needle not anchored here",
	}, "\n")
	if got != want {
		t.Errorf("grep:\n%s\nwant:\n%s", got, want)
	}
}

func TestGrepOptions(t *testing.T) {
	dir := searchTree(t)
	gr := toolByName(t, Config{CWD: dir}, "grep")
	got := wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle", "ignore_case": true, "glob": "*.md"}))
	if got != "notes.md:1:Needle upper" {
		t.Errorf("ignore_case+glob: %q", got)
	}
	got = wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle", "glob": "pkg/**/*.go"}))
	if got != "pkg/a.go:3:var needle = 1\npkg/deep/d.go:1:package deep // needle\npkg/keep.gen.go:1:needle kept" {
		t.Errorf("path glob: %q", got)
	}
	// A subdirectory as the search path: paths stay relative to cwd and
	// the root's ignore file still applies from above.
	got = wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle", "path": "pkg/deep"}))
	if got != "pkg/deep/d.go:1:package deep // needle\npkg/deep/more/e.txt:1:needle e" {
		t.Errorf("subdir: %q", got)
	}
	// A single file is searched even when ignored.
	got = wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle", "path": "debug.log"}))
	if got != "debug.log:1:needle in log" {
		t.Errorf("single file: %q", got)
	}
	got = wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle", "max_results": 2}))
	if !strings.HasSuffix(got, "[stopped after 2 matches; narrow the search or raise max_results]") || strings.Count(got, "\n") != 2 {
		t.Errorf("max_results: %q", got)
	}
	got = wantOK(t, runTool(t, gr, map[string]any{"pattern": "absent-word"}))
	if !strings.Contains(got, "no matches") {
		t.Errorf("no matches: %q", got)
	}
	wantErr(t, runTool(t, gr, map[string]any{"pattern": "x", "path": "nowhere"}), "nowhere")
}

func TestGrepContextAndLongLines(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 20; i++ {
		if i == 3 || i == 5 || i == 15 {
			fmt.Fprintf(&sb, "hit %d\n", i)
		} else {
			fmt.Fprintf(&sb, "line %d\n", i)
		}
	}
	sb.WriteString("hit " + strings.Repeat("w", 2000) + "\n")
	writeFiles(t, dir, map[string]string{"f.txt": sb.String()})
	gr := toolByName(t, Config{CWD: dir}, "grep")
	got := wantOK(t, runTool(t, gr, map[string]any{"pattern": "^hit", "context": 1}))
	lines := strings.Split(got, "\n")
	want := []string{
		"f.txt-2-line 2", "f.txt:3:hit 3", "f.txt-4-line 4", "f.txt:5:hit 5", "f.txt-6-line 6",
		"--",
		"f.txt-14-line 14", "f.txt:15:hit 15", "f.txt-16-line 16",
		"--",
		"f.txt-20-line 20",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("context output:\n%s", got)
		}
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "f.txt:21:hit www") || !strings.HasSuffix(last, " …") || len([]rune(last)) > 500+20 {
		t.Errorf("long line: %d runes", len([]rune(last)))
	}
}

func TestFind(t *testing.T) {
	dir := searchTree(t)
	fd := toolByName(t, Config{CWD: dir}, "find")
	got := wantOK(t, runTool(t, fd, map[string]any{"pattern": "**/*.go"}))
	want := "main.go\npkg/a.go\npkg/deep/d.go\npkg/keep.gen.go"
	if got != want {
		t.Errorf("**/*.go:\n%s\nwant:\n%s", got, want)
	}
	// A pattern without '/' matches names at any depth.
	if got := wantOK(t, runTool(t, fd, map[string]any{"pattern": "*.txt"})); got != "pkg/deep/more/e.txt\npkg/root-only.txt" {
		t.Errorf("*.txt: %q", got)
	}
	// Directories get a slash; matching is relative to the search root.
	if got := wantOK(t, runTool(t, fd, map[string]any{"pattern": "deep", "path": "pkg"})); got != "pkg/deep/" {
		t.Errorf("dir: %q", got)
	}
	if got := wantOK(t, runTool(t, fd, map[string]any{"pattern": "deep/**", "path": "pkg"})); got != "pkg/deep/d.go\npkg/deep/more/\npkg/deep/more/e.txt" {
		t.Errorf("deep/**: %q", got)
	}
	got = wantOK(t, runTool(t, fd, map[string]any{"pattern": "**", "max_results": 3}))
	if !strings.HasSuffix(got, "[stopped after 3 results; narrow the pattern or raise max_results]") || strings.Count(got, "\n") != 3 {
		t.Errorf("cap: %q", got)
	}
	if got := wantOK(t, runTool(t, fd, map[string]any{"pattern": "*.rs"})); !strings.Contains(got, "no paths match") {
		t.Errorf("none: %q", got)
	}
	wantErr(t, runTool(t, fd, map[string]any{"pattern": "*", "path": "main.go"}), "not a directory")
}

func TestFindOutsideAGitRepositoryUsesLocalIgnores(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".gitignore":   "tmp/\n",
		"tmp/x.txt":    "x",
		"keep/y.txt":   "y",
		"keep/.hidden": "h",
	})
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	got := wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "find"), map[string]any{"pattern": "**/*"}))
	if got != ".gitignore\nkeep/\nkeep/.hidden\nkeep/y.txt" {
		t.Errorf("got %q", got)
	}
}
