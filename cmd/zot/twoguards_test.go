package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Two intercepts of the same event in one extension are chained, not the
// second put in the place of the first: a guard that blocks still blocks
// when another part of the program adds a guard that allows.
func TestSecondInterceptKeepsTheFirstGuard(t *testing.T) {
	cases := []struct {
		name, manifest string
		files          map[string]string
		setup          func(t *testing.T, dir string) []string // the environment it needs
	}{
		{
			name:     "python",
			manifest: `{"name":"twoguards","exec":"python3","args":["main.py"]}`,
			files: map[string]string{"main.py": `from zot_ext import Block, Extension
ext = Extension("twoguards")

@ext.intercept_turn_start
def strict(step):
    return Block("twoguards: no model calls (step %d)" % step)

@ext.intercept_turn_start
def lenient(step):
    return None

ext.run()
`},
			setup: func(t *testing.T, dir string) []string {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
				return []string{"PYTHONPATH=" + mustAbs(t, "../../clients/python-ext")}
			},
		},
		{
			name:     "node",
			manifest: `{"name":"twoguards","exec":"node","args":["main.mjs"]}`,
			files: map[string]string{"main.mjs": `import { Extension, block } from "zot-ext";
const ext = new Extension("twoguards");
ext.interceptTurnStart((step) => block("twoguards: no model calls (step " + step + ")"));
ext.interceptTurnStart(() => undefined);
await ext.run();
`},
			setup: func(t *testing.T, dir string) []string {
				if _, err := exec.LookPath("node"); err != nil {
					t.Skip("no node")
				}
				if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(mustAbs(t, "../../clients/node-ext"), filepath.Join(dir, "node_modules", "zot-ext")); err != nil {
					t.Fatal(err)
				}
				return nil
			},
		},
		{
			name:     "go",
			manifest: `{"name":"twoguards","exec":"./twoguards"}`,
			setup: func(t *testing.T, dir string) []string {
				if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "twoguards"), "./testdata/twoguards").CombinedOutput(); err != nil {
					t.Fatalf("building the test extension: %v\n%s", err, out)
				}
				return nil
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "twoguards")
			writeExt(t, dir, c.manifest, c.files)
			homeEnv, _ := zotHomeEnv(t)
			env := append([]string{homeEnv}, c.setup(t, dir)...)
			p := start(t, env, rpcArgs(t, "--ext", dir)...)
			r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
			wantResponse(t, r, "prompt", true, "")
			wantBlockedAtStep1(t, p.untilDone(), "twoguards: no model calls (step 1)")
			if code := p.exit(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}
