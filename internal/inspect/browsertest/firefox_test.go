package browsertest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// marionette is a client of Firefox's remote protocol (Marionette): a
// length-prefixed JSON array per message, [0, id, command, params] out
// and [1, id, error, result] back.
type marionette struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	id   int
}

func (m *marionette) read() []json.RawMessage {
	m.t.Helper()
	n, err := m.r.ReadString(':')
	if err != nil {
		m.t.Fatalf("marionette: %v", err)
	}
	size, err := strconv.Atoi(n[:len(n)-1])
	if err != nil {
		m.t.Fatalf("marionette: a length of %q", n)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(m.r, body); err != nil {
		m.t.Fatalf("marionette: %v", err)
	}
	var msg []json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		// The greeting is an object.
		return nil
	}
	return msg
}

func (m *marionette) call(name string, params any) json.RawMessage {
	m.t.Helper()
	m.id++
	body, _ := json.Marshal([]any{0, m.id, name, params})
	if _, err := fmt.Fprintf(m.conn, "%d:%s", len(body), body); err != nil {
		m.t.Fatalf("marionette %s: %v", name, err)
	}
	msg := m.read()
	if len(msg) != 4 {
		m.t.Fatalf("marionette %s: answer %s", name, msg)
	}
	if string(msg[2]) != "null" {
		m.t.Fatalf("marionette %s: %s", name, msg[2])
	}
	return msg[3]
}

// script runs a function body in the page and decodes what it returns.
func (m *marionette) script(js string, v any) {
	m.t.Helper()
	res := m.call("WebDriver:ExecuteScript", map[string]any{"script": js, "args": []any{}})
	var out struct{ Value json.RawMessage }
	if err := json.Unmarshal(res, &out); err != nil || json.Unmarshal(out.Value, v) != nil {
		m.t.Fatalf("script %s: %s", js, res)
	}
}

// until waits for a function body that returns true.
func (m *marionette) until(what, js string) {
	m.t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		var ok bool
		m.script(js, &ok)
		if ok {
			return
		}
		time.Sleep(30 * time.Millisecond)
	}
	m.t.Fatalf("waiting in Firefox for %s", what)
}

// The inspector in Firefox (Debian's firefox-esr, driven over Marionette):
// the token in the address, a prompt's frames appearing live, a chunk run
// unfolded, a frame's JSON. A screenshot lands in the test's artifacts.
func TestInspectorInFirefox(t *testing.T) {
	exe, err := exec.LookPath("firefox-esr")
	if err != nil {
		if os.Getenv("ZOT_E2E_REQUIRED") == "1" {
			t.Fatal("no firefox-esr: make test-browser installs Debian's package")
		}
		t.Skip("no firefox-esr")
	}
	script := filepath.Join(t.TempDir(), "script.json")
	sc, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "Looking at the folder before answering, word by word.", "chunk": 4, "delay_ms": 20,
			"tool_calls": []any{map[string]any{"id": "call_1", "name": "bash", "args": map[string]any{"command": "echo hello from firefox"}}}},
		map[string]any{"text": "It printed hello from firefox."},
	}}}})
	if err := os.WriteFile(script, sc, 0o644); err != nil {
		t.Fatal(err)
	}
	z := startZot(t, script)

	profile := t.TempDir()
	// Marionette's port, given in the profile; a free one is taken.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	prefs := fmt.Sprintf("user_pref(\"marionette.port\", %d);\nuser_pref(\"browser.shell.checkDefaultBrowser\", false);\nuser_pref(\"app.update.enabled\", false);\nuser_pref(\"datareporting.policy.dataSubmissionEnabled\", false);\nuser_pref(\"ui.systemUsesDarkTheme\", 1);\n", port)
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs), 0o644); err != nil {
		t.Fatal(err)
	}
	ff := exec.Command(exe, "--headless", "--marionette", "--no-remote", "--profile", profile, "--window-size=1440,860")
	ff.Env = append(os.Environ(), "HOME="+profile, "MOZ_CRASHREPORTER_DISABLE=1")
	if err := ff.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ff.Process.Kill(); _ = ff.Wait() })
	var conn net.Conn
	deadline := time.Now().Add(guard)
	for {
		conn, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Firefox's Marionette did not open: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer conn.Close()
	m := &marionette{t: t, conn: conn, r: bufio.NewReader(conn)}
	m.read() // the greeting
	m.call("WebDriver:NewSession", map[string]any{"capabilities": map[string]any{}})
	m.call("WebDriver:Navigate", map[string]any{"url": z.url})
	m.until("the live stream, the token gone from the address", `return document.getElementById('status').classList.contains('live') && location.search === ''`)

	z.send(t, `{"type":"prompt","id":"p1","message":"Show me a tool call."}`)
	m.until("frames while the answer streams", `return document.querySelectorAll('#rows tr').length > 4`)
	var early bool
	m.script(`return !Array.from(document.querySelectorAll('#rows td.c-method')).some(td => td.textContent.startsWith('done'))`, &early)
	if !early {
		t.Error("Firefox showed the prompt's done at the first look: its frames did not arrive while it streamed")
	}
	z.until(t, `"type":"done"`)
	m.until("the done row and the tool call", `return Array.from(document.querySelectorAll('#rows td.c-method')).some(td => td.textContent.startsWith('done')) && document.querySelector('#rows tr.k-tool') !== null`)
	var chunks int
	m.script(`const r = Array.from(document.querySelectorAll('#rows tr.run')).find(r => r.textContent.includes('text_delta')); r.click(); return parseInt(r.querySelector('.c-kind').textContent.replace(/[^0-9]/g, ''))`, &chunks)
	m.until("the unfolded run", fmt.Sprintf(`return document.querySelectorAll('#rows tr.in-run').length === %d`, chunks))
	m.script(`Array.from(document.querySelectorAll('#rows tr.rec')).find(r => r.querySelector('.c-method').textContent === 'tool_call').click(); return true`, new(bool))
	m.until("the frame's JSON", `return document.getElementById('d-json').textContent.includes('"echo hello from firefox"')`)
	var shot struct{ Value string }
	if err := json.Unmarshal(m.call("WebDriver:TakeScreenshot", map[string]any{"full": false}), &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Value)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "inspect-firefox.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	m.call("Marionette:Quit", map[string]any{})
}
