package main

// zot acp as an editor first meets it: started without an API key, and
// ended by the editor closing the connection.

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

// acpProc is a `zot acp` subprocess with its client end.
type acpProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *zotbin.Buffer
	peer   *acpPeer
}

// startACPProc runs zot acp with args; unlike startACP it keeps the
// process and its stdout, so a test can wait for its exit.
func startACPProc(t *testing.T, home string, args ...string) *acpProc {
	t.Helper()
	cmd := exec.Command(zotBin, append([]string{"acp"}, args...)...)
	cmd.Env = doorEnv(home)
	stdin, stdout, stderr := startPiped(t, cmd)
	return &acpProc{cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, peer: checked(t, newDoorPeer(t, stdin, stdout))}
}

// authMethodsOf returns initialize's authMethods, failing when the
// member is missing.
func authMethodsOf(t *testing.T, f doorFrame) []map[string]any {
	t.Helper()
	var r struct {
		AuthMethods *[]map[string]any `json:"authMethods"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.AuthMethods == nil {
		t.Fatalf("initialize without authMethods: %s", f.raw)
	}
	return *r.AuthMethods
}

// wantAuthRequired checks that f is ACP's auth-required error naming the
// variable to set.
func wantAuthRequired(t *testing.T, what string, f doorFrame) {
	t.Helper()
	if f.Error == nil || f.Error.Code != -32000 || f.Error.Data["kind"] != "auth_required" || !strings.Contains(f.Error.Message, "set ANTHROPIC_API_KEY") {
		t.Errorf("%s without a key: %s, want -32000 auth_required naming ANTHROPIC_API_KEY", what, f.raw)
	}
}

// Without an API key zot acp still serves: initialize advertises how to
// authenticate, sessions are listed and loaded, and what needs the model
// (a new session, a prompt) is answered with ACP's auth-required error.
// With a keyless provider authMethods is there and empty.
func TestACPWithoutAKey(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()

	// A session made earlier, offline.
	a := startACPProc(t, home, "--provider", "scripted")
	if f, _ := a.peer.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); len(authMethodsOf(t, f)) != 0 {
		t.Errorf("scripted: authMethods %s, want []", f.raw)
	}
	id := sessionID(t, first(a.peer.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	if f, _ := a.peer.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), "allow_once"); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	a.stdin.Close()
	if err := endOf(t, a.cmd, a.stderr); err != nil {
		t.Fatalf("zot acp --provider scripted: %v\n%s", err, a.stderr)
	}

	// Now the default provider, anthropic, with no key anywhere.
	b := startACPProc(t, home)
	p := b.peer
	f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
	methods := authMethodsOf(t, f)
	if len(methods) != 1 || methods[0]["id"] != "anthropic-api-key" || !strings.Contains(fmt.Sprint(methods[0]["description"]), "ANTHROPIC_API_KEY") {
		t.Errorf("authMethods %v, want one naming ANTHROPIC_API_KEY", methods)
	}
	if f, _ := p.call("2", "session/list", `{}`, ""); f.Error != nil || !strings.Contains(string(f.Result), id) {
		t.Errorf("session/list without a key: %s", f.raw)
	}
	wantAuthRequired(t, "session/new", first(p.call("3", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	if f, _ := p.call("4", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, work), ""); f.Error != nil {
		t.Fatalf("session/load without a key: %s", f.raw)
	}
	wantAuthRequired(t, "session/prompt", first(p.call("5", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}`, id), "")))
	wantAuthRequired(t, "authenticate", first(p.call("6", "authenticate", `{"methodId":"anthropic-api-key"}`, "")))
	if f, _ := p.call("7", "authenticate", `{"methodId":"bogus"}`, ""); f.Error == nil || f.Error.Code != -32602 {
		t.Errorf("authenticate with an unknown method: %s", f.raw)
	}
	b.stdin.Close()
	if err := endOf(t, b.cmd, b.stderr); err != nil {
		t.Errorf("zot acp without a key, at the end of stdin: %v\n%s", err, b.stderr)
	}
	if !strings.Contains(b.stderr.String(), "no API key for anthropic") {
		t.Errorf("stderr does not say the key is missing: %q", b.stderr)
	}
}

// The editor closing its end first is a normal end of zot acp: exit 0,
// nothing on stderr about a broken pipe.
func TestACPStdoutClosedByTheClient(t *testing.T) {
	home := doorDir(t)
	a := startACPProc(t, home, "--provider", "scripted")
	if f, _ := a.peer.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	a.stdout.Close()
	// A request whose answer has nowhere to go; stdin stays open.
	fmt.Fprintln(a.stdin, `{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`)
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || strings.Contains(a.stderr.String(), "broken pipe") {
			t.Errorf("zot acp after the client closed stdout: %v, stderr %q; want exit 0, quiet", err, a.stderr)
		}
	case <-time.After(hangGuard):
		t.Fatal("zot acp did not end after the client closed stdout")
	}
}

// zot daemon shares the door: without a key it listens, advertises the
// auth method and answers session/new with auth_required.
func TestDaemonWithoutAKey(t *testing.T) {
	dir := doorDir(t)
	sock := dir + "/d.sock"
	d := &daemonProc{stderr: new(zotbin.Buffer), done: make(chan struct{})}
	d.cmd = exec.Command(zotBin, "daemon")
	d.cmd.Env = doorEnv(dir+"/home", "ZOT_SOCKET="+sock)
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); <-d.done })
	d.waitFor(t, "listening on")
	conn, _ := dialDoor(t, sock)
	p := checked(t, conn)
	f, _ := p.call("1", "initialize", `{"protocolVersion":1}`, "")
	if m := authMethodsOf(t, f); len(m) != 1 || m[0]["id"] != "anthropic-api-key" {
		t.Errorf("authMethods %v", m)
	}
	wantAuthRequired(t, "session/new", first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")))
	if f, _ := p.call("3", "session/list", `{}`, ""); f.Error != nil {
		t.Errorf("session/list: %s", f.raw)
	}
}
