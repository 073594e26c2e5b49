package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A guard that an extension registers in its start-up code (on_start,
// onStart, Init), after a second of work, guards the first prompt, sent
// as the very first line: each package promises ready in its hello
// (sends_ready), so zot waits for it instead of taking the quiet
// extension as ready without its intercepts.
func TestStartHookRegistersGuardBeforeFirstPrompt(t *testing.T) {
	cases := []struct {
		name, manifest string
		files          map[string]string
		setup          func(t *testing.T, dir string) []string // the environment it needs
	}{
		{
			name:     "python",
			manifest: `{"name":"hookguard","exec":"python3","args":["main.py"]}`,
			files: map[string]string{"main.py": `import time
from zot_ext import Block, Extension
ext = Extension("hookguard")

@ext.on_start
def start(host):
    time.sleep(1)

    @ext.intercept_turn_start
    def guard(step):
        return Block("hookguard: no model calls (step %d)" % step)

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
			manifest: `{"name":"hookguard","exec":"node","args":["main.mjs"]}`,
			files: map[string]string{"main.mjs": `import { Extension, block } from "zot-ext";
const ext = new Extension("hookguard");
ext.onStart(async () => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  ext.interceptTurnStart((step) => block("hookguard: no model calls (step " + step + ")"));
});
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
			manifest: `{"name":"hookguard","exec":"./hookguard"}`,
			setup: func(t *testing.T, dir string) []string {
				if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "hookguard"), "./testdata/hookguard").CombinedOutput(); err != nil {
					t.Fatalf("building the test extension: %v\n%s", err, out)
				}
				return nil
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hookguard")
			writeExt(t, dir, c.manifest, c.files)
			homeEnv, _ := zotHomeEnv(t)
			env := append([]string{homeEnv}, c.setup(t, dir)...)
			p := start(t, env, rpcArgs(t, "--ext", dir)...)
			r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
			wantResponse(t, r, "prompt", true, "")
			wantBlockedAtStep1(t, p.untilDone(), "hookguard: no model calls (step 1)")
			if code := p.exit(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}
