package exthost

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The misbehaving cases, each with the Node and the Go test extension
// (the Python one has its own tests): every language's extension gets
// the same treatment from the host.

// One that never says hello is killed after the handshake timeout.
func TestHandshakeTimeoutEveryLanguage(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, log := testConfig(t, langExt(t, "node", dir, "nodemute", "silent"), langExt(t, "go", dir, "gomute", "silent"))
	cfg.StartTimeout = time.Second
	h := start(t, sess, cfg)
	pids := []int{pidOf(t, h, "nodemute"), pidOf(t, h, "gomute")}
	h.WaitReady(context.Background())
	for _, pid := range pids {
		waitGone(t, pid, 5*time.Second)
	}
	for _, name := range []string{"nodemute", "gomute"} {
		if !strings.Contains(log.String(), "extension "+name+": not loaded: no hello within 1s; killed") {
			t.Errorf("log: %s", log.String())
		}
	}
	for _, i := range h.Extensions() {
		if i.State != "failed" {
			t.Errorf("state: %+v", i)
		}
	}
}

// Frames that are not JSON, too long, of an unknown type, or answers to
// nothing are logged and skipped; the extension works on.
func TestGarbageFramesEveryLanguage(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, log := testConfig(t, langExt(t, "node", dir, "nodejunk", "garbage"), langExt(t, "go", dir, "gojunk", "garbage"))
	cfg.MaxFrameBytes = 1024
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	for _, name := range []string{"nodejunk", "gojunk"} {
		if r := runTool(t, sess, name+"_echo", `{"text":"fine"}`); text(r) != "echo: fine" {
			t.Errorf("%s: result %q", name, text(r))
		}
		for _, want := range []string{"skipped a frame over 1024 bytes", "skipped a line that is not a JSON frame", `skipped a frame: unknown extension frame type "teleport"`} {
			if !strings.Contains(log.String(), "extension "+name+": "+want) {
				t.Errorf("log lacks %q for %s: %s", want, name, log.String())
			}
		}
		logFile, _ := os.ReadFile(filepath.Join(cfg.LogDir, "ext-"+name+".log"))
		if !strings.Contains(string(logFile), `dropped a tool_result for request "999"`) {
			t.Errorf("%s log: %s", name, logFile)
		}
	}
}

// A tool that does not answer within its own timeout fails with a clear
// error, and its extension gets a cancel frame.
func TestToolTimeoutEveryLanguage(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t, langExt(t, "node", dir, "nd", "ok"), langExt(t, "go", dir, "gx", "ok"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	for _, name := range []string{"nd", "gx"} {
		r := runTool(t, sess, name+"_slow", `{}`)
		if !r.IsError || !strings.Contains(text(r), fmt.Sprintf("gave no result for %s_slow within 300ms", name)) {
			t.Errorf("%s: result %q error=%v", name, text(r), r.IsError)
		}
		got.wait(t, name+" cancel", func(n Notice) bool { return n.Extension == name && n.Message == "cancel 1 timeout" })
	}
}

// An intercept that gets no answer lets the call run, or blocks it with
// fail_closed.
func TestInterceptTimeoutEveryLanguage(t *testing.T) {
	for _, lang := range []string{"node", "go"} {
		for _, closed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fail_closed=%v", lang, closed), func(t *testing.T) {
				dir := t.TempDir()
				s := engineSession(t, callScript("read", `{"path":"x"}`))
				folder := langExt(t, lang, dir, "hang", "hang_intercept")
				if closed {
					folder = manifestWith(t, folder, "fail_closed", true)
				}
				cfg, got, _ := testConfig(t, folder)
				cfg.InterceptTimeout = 300 * time.Millisecond
				start(t, s, cfg)
				res := toolResults(prompt(t, s, "go"))
				if len(res) != 1 {
					t.Fatalf("results: %q", res)
				}
				if blocked := strings.Contains(res[0], "extension hang: no answer within 300ms"); blocked != closed {
					t.Fatalf("result %q", res[0])
				}
				got.waitMessage(t, "cancel ")
			})
		}
	}
}

// manifestWith sets key in the manifest of folder and returns folder.
func manifestWith(t *testing.T, folder, key string, value any) string {
	t.Helper()
	file := filepath.Join(folder, ManifestFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = value
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}
