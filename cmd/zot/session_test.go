package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionFileHasOneWriter: a second zot on a session file that
// another zot holds exits 1, saying so, and the first carries on.
func TestSessionFileHasOneWriter(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"echo": true}}}}})
	args := []string{"rpc", "--provider", "scripted", "--cwd", dir, "--script", s, "--session", file}
	first := start(t, nil, args...)
	first.send(`{"id":"1","type":"prompt","message":"one"}`)
	first.response()
	first.untilDone()

	second := start(t, nil, args...)
	if code := second.exit(); code != 1 {
		t.Errorf("second zot on the file: exit %d", code)
	}
	if msg := second.stderr.String(); !strings.Contains(msg, file) || !strings.Contains(msg, "another zot") {
		t.Errorf("second zot's stderr: %q", msg)
	}

	first.send(`{"id":"2","type":"prompt","message":"two"}`)
	first.response()
	first.untilDone()
	if code := first.exit(); code != 0 {
		t.Fatalf("first zot: exit %d", code)
	}
	third := start(t, nil, args...)
	third.send(`{"id":"1","type":"get_state"}`)
	if resp, _ := third.response(); !resp.Success || !bytes.Contains(resp.Data, []byte(`"message_count":4`)) {
		t.Errorf("after the first zot ended: %s", resp.Data)
	}
	if code := third.exit(); code != 0 {
		t.Errorf("third zot: exit %d", code)
	}
}

// TestContinueKeepsDirectoriesApart: --continue in /…/x/proj and in
// /…/x-proj resumes two sessions, each recording its working directory.
func TestContinueKeepsDirectoriesApart(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	for _, d := range []string{"x/proj", "x-proj", "x/proj"} {
		cwd := filepath.Join(root, d)
		if err := os.MkdirAll(cwd, 0o700); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(zotBin, "-p", "hi", "--provider", "scripted", "--script", s, "--cwd", cwd, "--continue")
		cmd.Env = append(cleanEnv(), "ZOT_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zot in %s: %v\n%s", d, err, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("session files: %v", files)
	}
	cwds := map[string]int{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		first, _, _ := bytes.Cut(data, []byte("\n"))
		var h struct {
			Session struct {
				CWD string `json:"cwd"`
			} `json:"session"`
		}
		json.Unmarshal(first, &h)
		cwds[h.Session.CWD] = bytes.Count(data, []byte(`"role":"user"`))
	}
	if cwds[filepath.Join(root, "x/proj")] != 2 || cwds[filepath.Join(root, "x-proj")] != 1 {
		t.Errorf("prompts by recorded working directory: %v", cwds)
	}
}
