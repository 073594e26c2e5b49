package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// guardInEachLanguage runs one guarding extension, written once per
// extension package, against zot: name is the extension's name, the
// directory it lives in and the program under testdata/<name> (Go, built
// with sdk/ext); python is its main.py (zot_ext), node its main.mjs
// (zot-ext). Each must block the first prompt's turn start with
// "<name>: no model calls (step 1)", and zot must exit cleanly.
func guardInEachLanguage(t *testing.T, name, python, node string) {
	t.Helper()
	cases := []struct {
		lang, manifest string
		files          map[string]string
		setup          func(t *testing.T, dir string) []string // the environment it needs
	}{
		{
			lang:     "python",
			manifest: `{"name":"` + name + `","exec":"python3","args":["main.py"]}`,
			files:    map[string]string{"main.py": python},
			setup: func(t *testing.T, dir string) []string {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
				return []string{"PYTHONPATH=" + mustAbs(t, "../../clients/python-ext")}
			},
		},
		{
			lang:     "node",
			manifest: `{"name":"` + name + `","exec":"node","args":["main.mjs"]}`,
			files:    map[string]string{"main.mjs": node},
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
			lang:     "go",
			manifest: `{"name":"` + name + `","exec":"./` + name + `"}`,
			setup: func(t *testing.T, dir string) []string {
				if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./testdata/"+name).CombinedOutput(); err != nil {
					t.Fatalf("building the test extension: %v\n%s", err, out)
				}
				return nil
			},
		},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			writeExt(t, dir, c.manifest, c.files)
			homeEnv, _ := zotHomeEnv(t)
			env := append([]string{homeEnv}, c.setup(t, dir)...)
			p := start(t, env, rpcArgs(t, "--ext", dir)...)
			r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
			wantResponse(t, r, "prompt", true, "")
			wantBlockedAtStep1(t, p.untilDone(), name+": no model calls (step 1)")
			if code := p.exit(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}
