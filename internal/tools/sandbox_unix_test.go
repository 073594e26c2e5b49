//go:build linux

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/sandbox"
)

// TestSandboxConfinesTools: under workspace-write, write and edit refuse a
// path that leads outside the workspace (by "..", a symbolic link, a hard
// link) with an error naming the path, the rule and how to allow it, and
// bash's writes outside fail in the kernel with the same explanation.
func TestSandboxConfinesTools(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret"), []byte("keep\n"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "out"))
	os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "hard"))
	g := sandbox.NewGuard(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws})
	cfg := Config{CWD: ws, Sandbox: g, Env: []string{"PATH=/usr/bin:/bin"}}
	write, edit, bash := toolByName(t, cfg, "write"), toolByName(t, cfg, "edit"), toolByName(t, cfg, "bash")

	for _, p := range []string{"../outside/new", "out/secret", "hard", outside + "/x"} {
		r := runTool(t, write, map[string]any{"path": p, "content": "x"})
		if !r.IsError || !strings.Contains(textOf(r), "sandbox (workspace-write)") || !strings.Contains(textOf(r), "/unjail") {
			t.Errorf("write %s: %s", p, textOf(r))
		}
	}
	r := runTool(t, edit, map[string]any{"path": "out/secret", "edits": []map[string]any{{"oldText": "keep", "newText": "lost"}}})
	if !r.IsError || !strings.Contains(textOf(r), outside+"/secret") {
		t.Errorf("edit through the link: %s", textOf(r))
	}
	if r := runTool(t, write, map[string]any{"path": "in.txt", "content": "x"}); r.IsError {
		t.Errorf("write inside: %s", textOf(r))
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "keep\n" {
		t.Errorf("the outside file changed: %q", b)
	}

	if sandbox.Probe().Backend == sandbox.BackendNone {
		r := runTool(t, bash, map[string]any{"command": "true"})
		if !r.IsError || !strings.Contains(textOf(r), "--sandbox off") {
			t.Errorf("bash without a sandbox: %s", textOf(r))
		}
		return
	}
	r = runTool(t, bash, map[string]any{"command": "echo x > out/new"})
	if !r.IsError || !strings.Contains(textOf(r), "sandbox (workspace-write, network off)") {
		t.Errorf("bash writing outside: %s", textOf(r))
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("bash wrote outside the workspace")
	}
	if r := runTool(t, bash, map[string]any{"command": "echo x > made && cat made"}); r.IsError || !strings.Contains(textOf(r), "x") {
		t.Errorf("bash writing inside: %s", textOf(r))
	}

	g.Set(sandbox.Policy{Mode: sandbox.Full, Network: true, Workspace: ws})
	if r := runTool(t, write, map[string]any{"path": "../outside/new", "content": "x"}); r.IsError {
		t.Errorf("write under full: %s", textOf(r))
	}
}
