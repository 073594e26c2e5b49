package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A guard declared before the extension runs guards the first prompt even
// when the extension's start-up code (on_start, onStart, Init) takes
// longer than the quiet after hello that zot takes as ready: each package
// announces what it subscribed to with its registrations, before that
// code runs, so zot never holds it ready without its intercepts.
func TestSlowStartKeepsTheGuard(t *testing.T) {
	cases := []struct {
		name, manifest string
		files          map[string]string
		setup          func(t *testing.T, dir string) []string // the environment it needs
	}{
		{
			name:     "python",
			manifest: `{"name":"slowguard","exec":"python3","args":["main.py"]}`,
			files: map[string]string{"main.py": `import time
from zot_ext import Block, Extension
ext = Extension("slowguard")

@ext.intercept_turn_start
def guard(step):
    return Block("slowguard: no model calls (step %d)" % step)

@ext.on_start
def start(host):
    time.sleep(1)

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
			manifest: `{"name":"slowguard","exec":"node","args":["main.mjs"]}`,
			files: map[string]string{"main.mjs": `import { Extension, block } from "zot-ext";
const ext = new Extension("slowguard");
ext.interceptTurnStart((step) => block("slowguard: no model calls (step " + step + ")"));
ext.onStart(() => new Promise((resolve) => setTimeout(resolve, 1000)));
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
			manifest: `{"name":"slowguard","exec":"./slowguard"}`,
			setup: func(t *testing.T, dir string) []string {
				if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "slowguard"), "./testdata/slowguard").CombinedOutput(); err != nil {
					t.Fatalf("building the test extension: %v\n%s", err, out)
				}
				return nil
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "slowguard")
			writeExt(t, dir, c.manifest, c.files)
			homeEnv, _ := zotHomeEnv(t)
			env := append([]string{homeEnv}, c.setup(t, dir)...)
			p := start(t, env, rpcArgs(t, "--ext", dir)...)
			r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
			wantResponse(t, r, "prompt", true, "")
			wantBlockedAtStep1(t, p.untilDone(), "slowguard: no model calls (step 1)")
			if code := p.exit(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}
