package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `zot ext list --json` lists what a session would find, in load order,
// with the fields the table shows and more, for programs.
func TestExtListJSON(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	cwd := t.TempDir()

	// Nothing anywhere: an empty array, not the table's sentence.
	out, errOut, code := runExt(t, env, cwd, "ext", "list", "--json")
	if code != 0 || out != "[]\n" {
		t.Fatalf("empty list: %d %q %s", code, out, errOut)
	}

	writeExt(t, filepath.Join(cwd, ".zot", "extensions", "guard"),
		`{"name":"guard","version":"2.0.0","exec":"./guard.mjs","language":"javascript","description":"refuses rm -rf"}`, nil)
	writeExt(t, filepath.Join(home, "extensions", "guard"), `{"name":"guard","version":"1.0.0","exec":"./guard.mjs"}`, nil)
	writeExt(t, filepath.Join(home, "extensions", "off"), `{"name":"off","exec":"./off.py","enabled":false}`, nil)
	writeExt(t, filepath.Join(home, "extensions", "broken"), `{"name":"broken","exec":7}`, nil)
	work := writeExt(t, filepath.Join(t.TempDir(), "work"), `{"name":"guard","exec":"./guard.mjs","language":"javascript"}`, nil)

	out, errOut, code = runExt(t, env, cwd, "ext", "list", "--json", "--ext", work)
	if code != 0 {
		t.Fatalf("list --json: %d %s%s", code, out, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	type row struct {
		name, source, state, version, folder string
		enabled, trusted                     bool
	}
	// The folder is not trusted: no session starts the project's guard.
	want := []row{
		{"guard", "flag", "enabled", "", work, true, true},
		{"guard", "project", "untrusted", "2.0.0", filepath.Join(cwd, ".zot", "extensions", "guard"), true, false},
		{"broken", "user", "invalid", "", filepath.Join(home, "extensions", "broken"), false, true},
		{"guard", "user", "shadowed", "1.0.0", filepath.Join(home, "extensions", "guard"), true, true},
		{"off", "user", "disabled", "", filepath.Join(home, "extensions", "off"), false, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d extensions, want %d:\n%s", len(got), len(want), out)
	}
	keys := []string{"name", "version", "source", "enabled", "trusted", "state", "language", "description", "folder", "manifest", "exec", "error"}
	for i, w := range want {
		g := got[i]
		for _, k := range keys {
			if _, ok := g[k]; !ok {
				t.Errorf("entry %d lacks %q: %v", i, k, g)
			}
		}
		if len(g) != len(keys) {
			t.Errorf("entry %d has keys beyond %v: %v", i, keys, g)
		}
		r := row{g["name"].(string), g["source"].(string), g["state"].(string), g["version"].(string), g["folder"].(string), g["enabled"].(bool), g["trusted"].(bool)}
		if r != w {
			t.Errorf("entry %d: got %+v, want %+v", i, r, w)
		}
		if g["manifest"] != filepath.Join(w.folder, "extension.json") {
			t.Errorf("entry %d: manifest %v", i, g["manifest"])
		}
	}
	if got[1]["language"] != "javascript" || got[1]["description"] != "refuses rm -rf" || got[1]["exec"] != filepath.Join(cwd, ".zot", "extensions", "guard", "guard.mjs") {
		t.Errorf("project guard: %v", got[1])
	}
	if e, _ := got[2]["error"].(string); !strings.Contains(e, "at /exec: got number, want string") {
		t.Errorf("broken's error: %q", e)
	}

	// The table shows the same, with --ext as scope flag, and says how
	// to trust the folder.
	out, _, code = runExt(t, env, cwd, "ext", "list", "--ext", work)
	if code != 0 || !regexpMatch(out, `guard\s+-\s+enabled\s+flag\s+javascript\s+`+work) || !regexpMatch(out, `guard\s+2\.0\.0\s+untrusted\s+project`) ||
		!strings.Contains(out, "the project's extensions are untrusted") || !strings.Contains(out, "zot trust "+cwd) {
		t.Fatalf("table:\n%s", out)
	}

	// Trusted, the project's guard is enabled, and wins over the user's.
	if o, e, code := runZot(t, "", env, "trust", cwd); code != 0 {
		t.Fatalf("trust: %d %s%s", code, o, e)
	}
	out, errOut, code = runExt(t, env, cwd, "ext", "list", "--json")
	got = nil
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != 4 {
		t.Fatalf("list --json after trust: %d %v %s%s", code, err, out, errOut)
	}
	if got[0]["state"] != "enabled" || got[0]["trusted"] != true || got[2]["state"] != "shadowed" {
		t.Errorf("after trust: %v", got)
	}
	out, _, _ = runExt(t, env, cwd, "ext", "list")
	if !regexpMatch(out, `guard\s+2\.0\.0\s+enabled\s+project`) || strings.Contains(out, "untrusted") {
		t.Errorf("table after trust:\n%s", out)
	}

	// A flag of another command is refused as a usage error.
	_, errOut, code = runExt(t, env, cwd, "ext", "list", "--json", "--force")
	if code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("list --force: %d %s", code, errOut)
	}
}

// An --ext path that does not exist is listed under its own name and
// folder, invalid, as rpc reports it: not as the extension "/" in the
// folder above it.
func TestExtListMissingExtPath(t *testing.T) {
	homeEnv, _ := zotHomeEnv(t)
	cwd := t.TempDir()
	missing := filepath.Join(t.TempDir(), "weather")
	for _, c := range []struct{ arg, name, folder, manifest string }{
		{missing, "weather", missing, missing},
		{filepath.Join(missing, "extension.json"), "weather", missing, filepath.Join(missing, "extension.json")},
	} {
		out, errOut, code := runExt(t, []string{homeEnv}, cwd, "ext", "list", "--json", "--ext", c.arg)
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != 1 {
			t.Fatalf("list --json --ext %s: %d %v\n%s%s", c.arg, code, err, out, errOut)
		}
		g := got[0]
		if g["name"] != c.name || g["folder"] != c.folder || g["manifest"] != c.manifest || g["state"] != "invalid" || g["source"] != "flag" {
			t.Errorf("--ext %s: %v", c.arg, g)
		}
		if e, _ := g["error"].(string); !strings.Contains(e, "no such file or directory") {
			t.Errorf("--ext %s: error %q", c.arg, e)
		}
	}
}

// A manifest that is a dangling symlink is reported, as other manifests
// that cannot be used are, by `zot ext list` and by a session's
// discovery: not skipped as if the folder had none. A folder with no
// manifest, and a file beside the folders, are still no extension.
func TestDanglingManifestReported(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	cwd := t.TempDir()
	dir := filepath.Join(home, "extensions", "dangle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "gone.json")
	if err := os.Symlink(gone, filepath.Join(dir, "extension.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "extensions", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "extensions", "README"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "a symlink to " + gone + ", which does not exist"

	out, errOut, code := runExt(t, env, cwd, "ext", "list")
	if code != 0 || !regexpMatch(out, `dangle\s+-\s+invalid\s+user`) || !strings.Contains(out, want) || strings.Contains(out, "empty") || strings.Contains(out, "README") {
		t.Fatalf("list: %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runExt(t, env, cwd, "ext", "list", "--json")
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 || got[0]["state"] != "invalid" || !strings.Contains(got[0]["error"].(string), want) {
		t.Fatalf("list --json: %v\n%s", err, out)
	}

	p := start(t, env, rpcArgs(t)...)
	r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
	wantResponse(t, r, "prompt", true, "")
	p.untilDone()
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(p.stderr.String(), want) {
		t.Errorf("rpc's stderr lacks %q:\n%s", want, p.stderr.String())
	}
}
