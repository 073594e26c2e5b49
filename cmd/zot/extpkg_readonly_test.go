package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tools written with zot_ext and zot-ext say they change nothing as Go's
// ext.ReadOnly() does: in a session's read_only mode those run, and the
// others are refused.
func TestExtPackagesReadOnlyTools(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	home := filepath.Join(doorDir(t), "home")
	writeExt(t, filepath.Join(home, "extensions", "pyro"), `{"name":"pyro","exec":"./main.py"}`, map[string]string{"main.py": "#!" + py + `
from zot_ext import Extension
ext = Extension("pyro")

@ext.tool(read_only=True)
def py_look(args):
    "Looks."
    return "looked"

@ext.tool
def py_touch(args):
    "Touches."
    return "touched"

ext.run()
`})
	nodeDir := writeExt(t, filepath.Join(home, "extensions", "nodero"), `{"name":"nodero","exec":"./main.mjs"}`, map[string]string{"main.mjs": "#!" + node + `
import { Extension } from "zot-ext";
const ext = new Extension("nodero");
ext.tool("node_look", { description: "Looks.", readOnly: true }, () => "looked");
ext.tool("node_touch", "Touches.", () => "touched");
await ext.run();
`})
	if err := os.MkdirAll(filepath.Join(nodeDir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, "../../clients/node-ext"), filepath.Join(nodeDir, "node_modules", "zot-ext")); err != nil {
		t.Fatal(err)
	}
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{
			map[string]any{"id": "pl", "name": "py_look", "args": map[string]any{}},
			map[string]any{"id": "pt", "name": "py_touch", "args": map[string]any{}},
			map[string]any{"id": "nl", "name": "node_look", "args": map[string]any{}},
			map[string]any{"id": "nt", "name": "node_touch", "args": map[string]any{}},
		}},
		map[string]any{"text": "Done."},
	}}}})
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted", "--script", s)
	cmd.Env = doorEnv(home, "PYTHONPATH="+mustAbs(t, "../../clients/python-ext"))
	stdin, stdout, stderr := startPiped(t, cmd)
	p := checked(t, newDoorPeer(t, stdin, stdout))
	status, asked := toolStatusInMode(t, p, stderr, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "read_only")
	if len(asked) != 0 {
		t.Fatalf("asked in read_only mode about %v", asked)
	}
	want := map[string]string{"pl": "completed", "pt": "failed", "nl": "completed", "nt": "failed"}
	for id, w := range want {
		if status[id] != w {
			t.Errorf("%s in read_only mode: %q, want %q\n%s", id, status[id], w, stderr)
		}
	}
}
