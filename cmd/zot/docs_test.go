package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
)

// The copy-and-paste snippets of clients/README.md run as they are from
// the top of a checkout with bin/zot built, each printing the scripted
// answer.
func TestClientsReadmeSnippets(t *testing.T) {
	root := mustAbs(t, "../..")
	top := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "clients"), filepath.Join(top, "clients")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(top, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(zotBin, filepath.Join(top, "bin", "zot")); err != nil {
		t.Fatal(err)
	}
	homeEnv, _ := zotHomeEnv(t)
	run := func(t *testing.T, env []string, argv ...string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = top
		cmd.Env = append(append(cleanEnv(), homeEnv), env...)
		out := new(zotbin.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "The bash tool ran") {
			t.Errorf("%v: %v\n%s", argv, err, out)
		}
	}
	snippet := func(t *testing.T, heading, fence, file string) string {
		t.Helper()
		path := filepath.Join(top, file)
		if err := os.WriteFile(path, []byte(docBlock(t, "clients/README.md", heading, fence)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("no python3")
		}
		run(t, []string{"PYTHONPATH=clients/python"}, py, snippet(t, "\nPython (", "```python\n", "snippet.py"))
	})
	t.Run("node", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("no node")
		}
		run(t, nil, node, snippet(t, "\nNode:", "```js\n", "snippet.mjs"))
	})
	t.Run("shell", func(t *testing.T) {
		if _, err := exec.LookPath("jq"); err != nil {
			t.Skip("no jq (make test installs it)")
		}
		run(t, nil, "bash", snippet(t, "\nShell:", "```sh\n", "snippet.sh"))
	})
}

// The quick start of docs/rpc.md prints what the page says it prints.
func TestRPCDocsQuickStart(t *testing.T) {
	block := docBlock(t, "docs/rpc.md", "## Quick start", "```sh\n")
	homeEnv, _ := zotHomeEnv(t)
	cmd := exec.Command("bash", "-c", block)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(cleanEnv(), homeEnv), zotOnPath(t))
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) < 3 || !strings.HasPrefix(lines[0], `{"type":"response","id":"1","command":"prompt","success":true,"data":{"started":true}}`) ||
		!strings.HasPrefix(lines[len(lines)-1], `{"type":"done",`) {
		t.Errorf("the quick start: %v\n%s", err, out)
	}
}
