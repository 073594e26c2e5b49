package main

// Tests of zot daemon and zot acp as transports: JSON-RPC errors and bad
// input, socket security, endpoint ownership, ephemeral mode, shutdown
// and slow clients, all through the real binary over a real socket or
// its stdin and stdout. The ACP methods themselves are tested elsewhere.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/internal/zotbin"
)

// doorFrame is one JSON-RPC message as a test reads it.
type doorFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	raw string
}

// doorPeer is a client's end: it writes lines and reads frames. Every
// well-formed frame it sends or reads is checked against the ACP schema
// and the daemon's; the answers to bad lines are checked as errors.
type doorPeer struct {
	t      *testing.T
	w      io.Writer
	frames chan doorFrame
	closed chan struct{} // the agent's output ended
	conv   schemacheck.ACPConversation
}

func newDoorPeer(t *testing.T, w io.Writer, r io.Reader) *doorPeer {
	p := &doorPeer{t: t, w: w, frames: make(chan doorFrame, 1<<16), closed: make(chan struct{})}
	t.Cleanup(func() {
		if err := p.conv.Err(); err != nil {
			t.Error(err)
		}
	})
	go func() {
		defer close(p.closed)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			var f doorFrame
			if jerr := json.Unmarshal([]byte(line), &f); jerr != nil {
				f.Method = "<not JSON>"
			}
			f.raw = strings.TrimSpace(line)
			p.frames <- f
		}
	}()
	return p
}

// send sends a well-formed message.
func (p *doorPeer) send(line string) {
	p.t.Helper()
	p.conv.Frame(true, []byte(line))
	p.write(line)
}

// sendBad sends a line the agent must refuse; read its answer with
// nextBad.
func (p *doorPeer) sendBad(line string) {
	p.t.Helper()
	p.write(line)
}

func (p *doorPeer) write(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatalf("sending %.80s: %v", line, err)
	}
}

// next returns the next frame.
func (p *doorPeer) next() doorFrame {
	p.t.Helper()
	f := p.read()
	p.conv.Frame(false, []byte(f.raw))
	return f
}

// nextBad returns the next frame, the answer to a bad line: an error
// that must fit ACP's Error with the daemon's ErrorData.
func (p *doorPeer) nextBad() doorFrame {
	p.t.Helper()
	f := p.read()
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(f.raw), &m) != nil || m.Error == nil {
		p.t.Fatalf("want an error, got %s", f.raw)
	}
	if err := schemacheck.ValidateRPCDef("acp/schema.json", "Error", m.Error); err != nil {
		p.t.Errorf("%s: %v", f.raw, err)
	}
	var e struct {
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(m.Error, &e)
	if err := schemacheck.ValidateRPCDef("daemon/daemon.json", "ErrorData", e.Data); err != nil {
		p.t.Errorf("%s: data: %v", f.raw, err)
	}
	return f
}

func (p *doorPeer) read() doorFrame {
	p.t.Helper()
	select {
	case f := <-p.frames:
		return f
	case <-p.closed:
		select {
		case f := <-p.frames:
			return f
		default:
		}
		p.t.Fatal("the agent's output ended")
	case <-time.After(hangGuard):
		p.t.Fatal("no frame in time")
	}
	return doorFrame{}
}

// await returns the answer to id and the notifications before it.
func (p *doorPeer) await(id string) (doorFrame, []doorFrame) {
	p.t.Helper()
	var before []doorFrame
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == id {
			return f, before
		}
		before = append(before, f)
	}
}

// call sends a request and returns its answer.
func (p *doorPeer) call(id, method, params string) doorFrame {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	f, _ := p.await(id)
	return f
}

// badLines are input errors, each with the code and kind of its answer
// and the id the answer carries.
var badLines = []struct {
	name, line, id string
	code           int64
	kind           string
}{
	{"not JSON", `{"jsonrpc":"2.0","id":1,"method":`, "null", -32700, "malformed_json"},
	{"not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\xc3\"}", "null", -32700, "invalid_utf8"},
	{"not an object", `"hello"`, "null", -32600, "invalid_request"},
	{"batch", `[{"jsonrpc":"2.0","id":3,"method":"initialize"}]`, "null", -32600, "invalid_request"},
	{"no jsonrpc", `{"id":4,"method":"initialize"}`, "4", -32600, "invalid_request"},
	{"bad id", `{"jsonrpc":"2.0","id":[5],"method":"initialize"}`, "null", -32600, "invalid_request"},
	{"no method", `{"jsonrpc":"2.0","id":6}`, "6", -32600, "invalid_request"},
	{"params not structured", `{"jsonrpc":"2.0","id":7,"method":"initialize","params":"x"}`, "7", -32602, "invalid_params"},
	{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"no/such/method","params":{}}`, "8", -32601, "unknown_method"},
	{"over the limit", `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`, "null", -32600, "line_too_long"},
}

// checkBadLines sends each bad line, checks its answer, and checks that
// the line after it is served.
func checkBadLines(t *testing.T, p *doorPeer) {
	t.Helper()
	for i, bl := range badLines {
		p.sendBad(bl.line)
		f := p.nextBad()
		if f.Error == nil || string(f.ID) != bl.id || f.Error.Code != bl.code || f.Error.Data["kind"] != bl.kind {
			t.Errorf("%s: got %s, want id %s, code %d, kind %s", bl.name, f.raw, bl.id, bl.code, bl.kind)
		} else if _, ok := f.Error.Data["retryable"].(bool); !ok {
			t.Errorf("%s: no data.retryable in %s", bl.name, f.raw)
		}
		id := fmt.Sprintf(`"next-%d"`, i)
		if f := p.call(id, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil || !strings.Contains(string(f.Result), `"protocolVersion":1`) {
			t.Fatalf("after %s: initialize answered %s", bl.name, f.raw)
		}
	}
	// Bad params name the field.
	p.sendBad(`{"jsonrpc":"2.0","id":20,"method":"session/new","params":{"mcpServers":[]}}`)
	f := p.nextBad()
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["field"] == nil {
		t.Errorf("session/new without cwd: %s, want -32602 naming the field", f.raw)
	}
}

// doorEnv is the environment of a daemon or acp process with its own
// zot home.
func doorEnv(home string, extra ...string) []string {
	env := []string{"ZOT_SOCKET="}
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "ZOT_HOME=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "ZOT_HOME="+home), extra...)
}

// doorDir is a temp directory short enough for socket paths.
func doorDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// daemonProc is a running zot daemon.
type daemonProc struct {
	cmd    *exec.Cmd
	stderr *zotbin.Buffer
	done   chan struct{}
	err    error
}

func startZotDaemon(t *testing.T, env []string, args ...string) *daemonProc {
	t.Helper()
	cmd := exec.Command(zotBin, append([]string{"daemon", "--provider", "scripted"}, args...)...)
	cmd.Env = env
	return startDaemonCmd(t, cmd)
}

// startDaemonCmd starts cmd, a zot daemon, its stderr kept unless
// cmd.Stderr is set already; it is killed at cleanup.
func startDaemonCmd(t *testing.T, cmd *exec.Cmd) *daemonProc {
	t.Helper()
	d := &daemonProc{cmd: cmd, stderr: new(zotbin.Buffer), done: make(chan struct{})}
	if d.cmd.Stderr == nil {
		d.cmd.Stderr = d.stderr
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		<-d.done
	})
	return d
}

func (d *daemonProc) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(d.stderr.String(), text) {
		select {
		case <-d.done:
			t.Fatalf("daemon exited (%v) before logging %q:\n%s", d.err, text, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not log %q:\n%s", text, d.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (d *daemonProc) waitExit(t *testing.T) {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(hangGuard):
		t.Fatalf("daemon still running:\n%s", d.stderr)
	}
}

func (d *daemonProc) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

func dialDoor(t *testing.T, sock string) (*doorPeer, net.Conn) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return newDoorPeer(t, c, c), c
}

func TestDoorStdioErrorsAnswered(t *testing.T) {
	home := doorDir(t)
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted", "--max-line-bytes", "1024")
	cmd.Env = doorEnv(home)
	stdin, stdout, stderr := startPiped(t, cmd)
	p := newDoorPeer(t, stdin, stdout)
	checkBadLines(t, p)
	// The end of stdin ends zot acp with status 0.
	_ = stdin.Close()
	if err := endOf(t, cmd, stderr); err != nil {
		t.Fatalf("zot acp at the end of stdin: %v\n%s", err, stderr)
	}
}

func TestDoorSocketGarbageIsolated(t *testing.T) {
	home := doorDir(t)
	d := startZotDaemon(t, doorEnv(home), "--max-line-bytes", "1024", "--script", writeScript(t, home, 100, 8, 0))
	d.waitFor(t, "listening on")
	sock := filepath.Join(home, "daemon.sock")
	bad, _ := dialDoor(t, sock)
	good, _ := dialDoor(t, sock)
	bad.call("0", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			for _, bl := range badLines {
				bad.sendBad(bl.line)
			}
		}
	}()
	// Meanwhile another client works undisturbed.
	if f := good.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f := good.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
	var sn struct{ SessionID string }
	if f.Error != nil || json.Unmarshal(f.Result, &sn) != nil || sn.SessionID == "" {
		t.Fatalf("session/new: %s", f.raw)
	}
	f, updates := func() (doorFrame, []doorFrame) {
		good.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hello"}]}}`, sn.SessionID))
		return good.await("3")
	}()
	if f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) || len(updates) == 0 {
		t.Fatalf("prompt beside a garbage client: %s after %d updates", f.raw, len(updates))
	}
	wg.Wait()
	// Every bad line got its answer, in order, and the client is still
	// served.
	for i := range 20 * len(badLines) {
		bl := badLines[i%len(badLines)]
		if f := bad.nextBad(); f.Error == nil || f.Error.Data["kind"] != bl.kind {
			t.Fatalf("bad line %d (%s): %s", i, bl.name, f.raw)
		}
	}
	checkBadLines(t, bad)
}

// nodeClient is a client run as another user: it connects, sends one
// request and prints the answer, "closed" when the daemon hangs up, or
// the connect error's code.
const nodeClient = `
const net = require('net');
const c = net.connect(process.argv[1]);
let out = '';
c.on('connect', () => c.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'));
c.on('data', d => { out += d; if (out.includes('\n')) { console.log('answer ' + out.trim()); process.exit(0); } });
c.on('error', e => { console.log('error ' + e.code); process.exit(0); });
c.on('close', () => { console.log('closed'); process.exit(0); });
setTimeout(() => { console.log('timeout'); process.exit(0); }, 30000);
`

func runNodeAsNobody(t *testing.T, sock string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run a client as another user: %v", err)
	}
	cmd := exec.Command(node, "-e", nodeClient, sock)
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestDoorSocketSecurity(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("this test runs a client as another user, which needs root (uid %d)", os.Getuid())
	}
	top := doorDir(t)
	home := filepath.Join(top, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	d := startZotDaemon(t, doorEnv(home))
	d.waitFor(t, "listening on")
	sock := filepath.Join(home, "daemon.sock")
	st, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != 0o600 {
		t.Errorf("socket: %v, want a socket of mode 0600", st.Mode())
	}
	if st, _ := os.Stat(home); st.Mode().Perm() != 0o700 {
		t.Errorf("socket directory: %v, want 0700", st.Mode().Perm())
	}
	// Another user is kept out by the permissions...
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := runNodeAsNobody(t, sock); got != "error EACCES" {
		t.Errorf("nobody through the private socket: %q, want error EACCES", got)
	}
	// ...and, were they opened, by the uid check, which logs the pid.
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	// The client sees the hang-up as the end of the stream, or as a
	// broken pipe or a reset when its request was still being written.
	if got := runNodeAsNobody(t, sock); got != "closed" && got != "error EPIPE" && got != "error ECONNRESET" {
		t.Errorf("nobody through an open socket: %q, want the daemon to hang up", got)
	}
	if !strings.Contains(d.stderr.String(), "refused a client of uid 65534 (pid ") {
		t.Errorf("the refusal is not logged with the uid and pid:\n%s", d.stderr)
	}
	p, _ := dialDoor(t, sock)
	if f := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("the daemon's own user after a refusal: %s", f.raw)
	}
}

func TestDoorEndpointOwnership(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "z.sock")
	env := doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock)
	first := startZotDaemon(t, env)
	first.waitFor(t, "listening on "+sock)
	// A second daemon on the same endpoint fails, naming the first.
	second := startZotDaemon(t, env)
	second.waitExit(t)
	// One line, the command named once, and what to do about it.
	want := fmt.Sprintf("zot: another zot daemon (pid %d) serves %s: stop it, or set ZOT_SOCKET to serve elsewhere\n", first.cmd.Process.Pid, sock)
	if second.cmd.ProcessState.ExitCode() != 1 || !strings.HasSuffix(second.stderr.String(), want) || strings.Contains(second.stderr.String(), "zot: zot") {
		t.Errorf("second daemon: exit %d, %q; want exit 1 and %q", second.cmd.ProcessState.ExitCode(), second.stderr, want)
	}
	p, c := dialDoor(t, sock)
	if f := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("the first daemon after the second's attempt: %s", f.raw)
	}
	c.Close()
	// Killed, the first leaves its socket; the next daemon replaces it.
	_ = first.cmd.Process.Kill()
	first.waitExit(t)
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("no socket left by the killed daemon: %v", err)
	}
	third := startZotDaemon(t, env)
	third.waitFor(t, "listening on "+sock)
	if !strings.Contains(third.stderr.String(), "removed the stale socket") {
		t.Errorf("no word of the stale socket:\n%s", third.stderr)
	}
	p, _ = dialDoor(t, sock)
	if f := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("the daemon that replaced a stale socket: %s", f.raw)
	}
}

func TestDoorEphemeral(t *testing.T) {
	home := doorDir(t)
	d := startZotDaemon(t, doorEnv(home), "--ephemeral")
	d.waitFor(t, "listening on")
	// Never before the first client came (the grace is 1 s).
	time.Sleep(2500 * time.Millisecond)
	if !d.running() {
		t.Fatalf("exited before any client came:\n%s", d.stderr)
	}
	sock := filepath.Join(home, "daemon.sock")
	a, ca := dialDoor(t, sock)
	a.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	// Not while a client is connected, though another left.
	b, cb := dialDoor(t, sock)
	b.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	ca.Close()
	time.Sleep(2500 * time.Millisecond)
	if !d.running() {
		t.Fatalf("exited with a client connected:\n%s", d.stderr)
	}
	b.call("2", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	cb.Close()
	d.waitExit(t)
	if d.err != nil {
		t.Fatalf("ephemeral exit: %v\n%s", d.err, d.stderr)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// writeScript writes a script of one turn whose text is n bytes streamed
// in pieces of chunk bytes, delay ms apart.
func writeScript(t *testing.T, dir string, n, chunk, delay int) string {
	t.Helper()
	step := map[string]any{"text": strings.Repeat("z", n), "chunk": chunk, "delay_ms": delay}
	b, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"steps": []any{step}}}})
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDoorSIGTERMAnswersWorkUnderWay(t *testing.T) {
	home := doorDir(t)
	script := writeScript(t, home, 1000, 1, 100) // 100 s of streaming
	d := startZotDaemon(t, doorEnv(home), "--script", script)
	d.waitFor(t, "listening on")
	sock := filepath.Join(home, "daemon.sock")
	p, _ := dialDoor(t, sock)
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
	var sn struct{ SessionID string }
	if json.Unmarshal(f.Result, &sn) != nil || sn.SessionID == "" {
		t.Fatalf("session/new: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, sn.SessionID))
	// The turn is under way once its text streams (the session's first
	// updates, such as its commands, may come before the prompt is read).
	for u := p.next(); !strings.Contains(string(u.Params), `"agent_message_chunk"`); u = p.next() {
		if u.Method != "session/update" {
			t.Fatalf("want the turn under way, got %s", u.raw)
		}
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The prompt is answered before the daemon hangs up.
	ans, _ := p.await("3")
	if ans.Error != nil || !strings.Contains(string(ans.Result), `"stopReason":"cancelled"`) {
		t.Errorf("prompt at SIGTERM: %s, want stopReason cancelled", ans.raw)
	}
	d.waitExit(t)
	if d.err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", d.err, d.stderr)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestDoorSlowReaderDoesNotBlockOthers(t *testing.T) {
	home := doorDir(t)
	script := writeScript(t, home, 1<<20, 64, 0) // 16,384 updates a prompt
	d := startZotDaemon(t, doorEnv(home), "--script", script, "--client-stall-timeout", "1s")
	d.waitFor(t, "listening on")
	sock := filepath.Join(home, "daemon.sock")
	open := func(p *doorPeer) string {
		p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
		f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
		var sn struct{ SessionID string }
		if json.Unmarshal(f.Result, &sn) != nil || sn.SessionID == "" {
			t.Fatalf("session/new: %s", f.raw)
		}
		return sn.SessionID
	}
	// The slow client starts a prompt, then reads nothing: its reader is
	// a pipe nobody drains.
	sc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	stuckR, stuckW := io.Pipe()
	defer stuckR.Close()
	slowLines := make(chan string, 8)
	go func() {
		br := bufio.NewReader(sc)
		for range 2 {
			line, err := br.ReadString('\n')
			if err != nil {
				break
			}
			slowLines <- line
		}
		close(slowLines)
		_, _ = io.Copy(stuckW, br) // blocks at once: nobody reads stuckR
	}()
	slow := &doorPeer{t: t, w: sc}
	slow.write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	slow.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, home))
	var sn struct {
		Result struct{ SessionID string }
	}
	<-slowLines
	if err := json.Unmarshal([]byte(<-slowLines), &sn); err != nil || sn.Result.SessionID == "" {
		t.Fatalf("slow client's session/new: %v", err)
	}
	slow.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, sn.Result.SessionID))

	// Another client runs a whole turn of its own meanwhile.
	fast, _ := dialDoor(t, sock)
	id := open(fast)
	fast.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	ans, updates := fast.await("3")
	if ans.Error != nil || !strings.Contains(string(ans.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("fast client's prompt: %s", ans.raw)
	}
	var text int
	for _, u := range updates {
		var p struct {
			Update struct {
				SessionUpdate string
				Content       struct{ Text string }
			}
		}
		if json.Unmarshal(u.Params, &p) == nil && p.Update.SessionUpdate == "agent_message_chunk" {
			text += len(p.Update.Content.Text)
		}
	}
	if text != 1<<20 {
		t.Errorf("fast client got %d bytes of text, want %d", text, 1<<20)
	}
	// The slow one is let go once its queue stayed full for 1 s.
	d.waitFor(t, "client stopped reading")
}

func TestDoorStdioSIGTERM(t *testing.T) {
	home := doorDir(t)
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted", "--script", writeScript(t, home, 1000, 1, 100))
	cmd.Env = doorEnv(home)
	stdin, stdout, stderr := startPiped(t, cmd)
	defer stdin.Close()
	p := newDoorPeer(t, stdin, stdout)
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
	var sn struct{ SessionID string }
	if json.Unmarshal(f.Result, &sn) != nil || sn.SessionID == "" {
		t.Fatalf("session/new: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, sn.SessionID))
	// The turn is under way once its text streams (the session's first
	// updates, such as its commands, may come before the prompt is read).
	for u := p.next(); !strings.Contains(string(u.Params), `"agent_message_chunk"`); u = p.next() {
		if u.Method != "session/update" {
			t.Fatalf("want the turn under way, got %s", u.raw)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ans, _ := p.await("3")
	if ans.Error != nil || !strings.Contains(string(ans.Result), `"stopReason":"cancelled"`) {
		t.Errorf("prompt at SIGTERM: %s, want stopReason cancelled", ans.raw)
	}
	err := endOf(t, cmd, stderr)
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("zot acp after SIGTERM: %v (exit %d), want exit 143\n%s", err, code, stderr)
	}
}

func TestDoorSIGTERMReapsToolProcesses(t *testing.T) {
	home := doorDir(t)
	pidFile := filepath.Join(home, "pid")
	step := map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{
		"command": "echo $$ > " + pidFile + "; exec sleep 300"}}}}
	b, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"steps": []any{step, map[string]any{"text": "done"}}}}})
	script := filepath.Join(home, "script.json")
	if err := os.WriteFile(script, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startZotDaemon(t, doorEnv(home), "--script", script, "--permission", "allow")
	d.waitFor(t, "listening on")
	p, _ := dialDoor(t, filepath.Join(home, "daemon.sock"))
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
	var sn struct{ SessionID string }
	if json.Unmarshal(f.Result, &sn) != nil || sn.SessionID == "" {
		t.Fatalf("session/new: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, sn.SessionID))
	var pid int
	deadline := time.Now().Add(hangGuard)
	for pid == 0 {
		if b, err := os.ReadFile(pidFile); err == nil {
			fmt.Sscan(string(b), &pid)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bash tool never started:\n%s", d.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The pid is written just before the exec: wait until it is sleep.
	for {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never became sleep", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ans, _ := p.await("3")
	if !strings.Contains(string(ans.Result), `"stopReason":"cancelled"`) {
		t.Errorf("prompt at SIGTERM: %s, want stopReason cancelled", ans.raw)
	}
	d.waitExit(t)
	if d.err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", d.err, d.stderr)
	}
	// The tool's process is gone: killed and reaped, not left running or
	// as a zombie.
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the bash tool's process %d outlived the daemon", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDoorLongHomeFallsBackToShortSocket(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, strings.Repeat("h", 60), strings.Repeat("o", 60))
	runtime := filepath.Join(dir, "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	d := startZotDaemon(t, doorEnv(home, "XDG_RUNTIME_DIR="+runtime))
	d.waitFor(t, "listening on")
	if !strings.Contains(d.stderr.String(), "is too long for a socket address; using "+filepath.Join(runtime, "zot")) {
		t.Fatalf("no word of the fallback:\n%s", d.stderr)
	}
	socks, _ := filepath.Glob(filepath.Join(runtime, "zot", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets under the runtime dir: %v", socks)
	}
	st, err := os.Stat(filepath.Dir(socks[0]))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("fallback directory: %v, want 0700", st.Mode().Perm())
	}
	p, _ := dialDoor(t, socks[0])
	if f := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("through the fallback socket: %s", f.raw)
	}
	// The sessions stay under the long home.
	f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, dir))
	var sn struct{ SessionID string }
	if json.Unmarshal(f.Result, &sn) != nil || sn.SessionID == "" {
		t.Fatalf("session/new: %s", f.raw)
	}
	if _, err := os.Stat(filepath.Join(home, "sessions")); err != nil {
		t.Errorf("sessions not under the zot home: %v", err)
	}
}
