package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const (
	remoteAlice = "alice-0123456789abcdef0123"
	remoteBob   = "bob-0123456789abcdef012345"
	remoteRoot  = "root-0123456789abcdef01234"
)

// remoteTokens writes a token file naming alice, bob and root (admin).
func remoteTokens(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "tokens")
	body := "# principals of the test\nalice " + remoteAlice + "\nbob " + remoteBob + "\nroot " + remoteRoot + " admin\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var listenLog = regexp.MustCompile(`listening on (wss?://[^ \n]+/acp)`)

// startRemote starts zot daemon with args (a --listen among them) and
// returns it with the URL its first listener took.
func startRemote(t *testing.T, dir string, args ...string) (*daemonProc, string) {
	t.Helper()
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s")), args...)
	d.waitFor(t, "/acp")
	m := listenLog.FindStringSubmatch(d.stderr.String())
	if m == nil {
		t.Fatalf("no listener URL in the log:\n%s", d.stderr)
	}
	return d, m[1]
}

// wsDial opens a WebSocket to url with the header given.
func wsDial(t *testing.T, url string, hdr http.Header, client *http.Client) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: client})
	if c != nil {
		t.Cleanup(func() { _ = c.CloseNow() })
	}
	return c, resp, err
}

func bearerHeader(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// wsPeer speaks JSON-RPC over one WebSocket connection.
type wsPeer struct {
	t *testing.T
	c *websocket.Conn
}

func (p *wsPeer) send(msg string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		p.t.Fatalf("writing %s: %v", msg, err)
	}
}

type wsFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	raw string
}

func (p *wsPeer) next() wsFrame {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	typ, data, err := p.c.Read(ctx)
	if err != nil {
		p.t.Fatalf("reading: %v", err)
	}
	if typ != websocket.MessageText {
		p.t.Fatalf("a %v message from the daemon, want text", typ)
	}
	var f wsFrame
	if err := json.Unmarshal(data, &f); err != nil {
		p.t.Fatalf("not one JSON-RPC message per WebSocket message: %q", data)
	}
	f.raw = string(data)
	return f
}

// call sends a request and returns its answer, with what came before it.
func (p *wsPeer) call(id, method, params string) (wsFrame, []wsFrame) {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	var before []wsFrame
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == id {
			return f, before
		}
		before = append(before, f)
	}
}

func wsClosedWith(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the daemon did not close the connection")
			}
			return websocket.CloseStatus(err)
		}
	}
}

// TestRemoteSDKClient: the official ACP TypeScript SDK's WebSocket
// transport drives zot daemon --listen: initialize, new, a prompt with a
// permission request, cancel, a connection dropped mid-turn whose session
// is resumed on a new one, load once the turn ended.
func TestRemoteSDKClient(t *testing.T) {
	node, err := exec.LookPath("node")
	modules, _ := filepath.Abs(filepath.Join("..", "..", "testtools", "node_modules"))
	if err == nil {
		_, err = os.Stat(filepath.Join(modules, "@agentclientprotocol", "sdk", "dist", "transports", "ws-stream.js"))
	}
	if err == nil {
		_, err = os.Stat(filepath.Join(modules, "ws"))
	}
	if err != nil {
		msg := fmt.Sprintf("node, @agentclientprotocol/sdk or ws is missing (%v): run make testtools", err)
		if os.Getenv("ZOT_E2E_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := doorDir(t)
	var words []string
	for i := range 40 {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	slow := strings.Join(words, " ") + " THE END"
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"text": "Writing.", "tool_calls": []any{map[string]any{"id": "w1", "name": "write", "args": map[string]any{"path": "a.txt", "content": "hello\n"}}}},
			map[string]any{"text": "Done."},
		}},
		map[string]any{"steps": []any{map[string]any{"text": "a long and slow answer that the client cancels", "chunk": 2, "delay_ms": 200}}},
		map[string]any{"steps": []any{map[string]any{"text": slow, "chunk": 4, "delay_ms": 40}}},
	}})
	_, url := startRemote(t, dir, "--script", s, "--permission", "ask", "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir))
	work := t.TempDir()
	runDir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(runDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "acp_ws_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(runDir, "client.mjs")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, file)
	cmd.Env = append(os.Environ(), "URL="+url, "TOKEN="+remoteAlice, "WORK="+work, "ANSWER="+slow)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the SDK client failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestRemoteRefusals: what the listener refuses, through the binary.
func TestRemoteRefusals(t *testing.T) {
	dir := doorDir(t)
	d, url := startRemote(t, dir, "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir),
		"--allow-origin", "https://editor.example", "--max-line-bytes", "4096", "--handshake-timeout", "500ms")
	for _, tc := range []struct {
		name string
		hdr  http.Header
		want int
	}{
		{"no token", nil, 401},
		{"a wrong token", bearerHeader("wrong-0123456789abcdef0123"), 401},
		{"a foreign Origin", http.Header{"Authorization": {"Bearer " + remoteAlice}, "Origin": {"https://evil.example"}}, 403},
	} {
		_, resp, err := wsDial(t, url, tc.hdr, nil)
		if err == nil || resp == nil || resp.StatusCode != tc.want {
			t.Errorf("%s: %v %v, want HTTP %d", tc.name, resp, err, tc.want)
		}
	}
	// The listed origin is served.
	c, resp, err := wsDial(t, url, http.Header{"Authorization": {"Bearer " + remoteAlice}, "Origin": {"https://editor.example"}}, nil)
	if err != nil {
		t.Fatalf("a listed origin: %v", err)
	}
	if resp.Header.Get("Acp-Connection-Id") == "" {
		t.Error("the 101 answer has no Acp-Connection-Id")
	}
	p := &wsPeer{t: t, c: c}
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	// A bad message gets a JSON-RPC error and the connection goes on.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"mcpServers":[]}}`)
	if f := p.next(); f.Error == nil || f.Error.Code != -32602 {
		t.Errorf("session/new without cwd: %s", f.raw)
	}

	// Plain HTTP to /acp, and the probes.
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/acp")
	for _, tc := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/healthz", "", 200},
		{"GET", "/readyz", "", 200},
		{"GET", "/acp", "", 401},
		{"GET", "/acp", remoteAlice, 400},
		{"POST", "/acp", remoteAlice, 426},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}

	ctx := context.Background()
	// The first message must be initialize.
	c, _, _ = wsDial(t, url, bearerHeader(remoteAlice), nil)
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`))
	if got := wsClosedWith(t, c); got != 1002 {
		t.Errorf("session/list first: closed with %d, want 1002", got)
	}
	// A binary message.
	c, _, _ = wsDial(t, url, bearerHeader(remoteAlice), nil)
	p = &wsPeer{t: t, c: c}
	p.call("1", "initialize", `{"protocolVersion":1}`)
	_ = c.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`))
	if got := wsClosedWith(t, c); got != 1003 {
		t.Errorf("a binary message: closed with %d, want 1003", got)
	}
	// A message over --max-line-bytes.
	c, _, _ = wsDial(t, url, bearerHeader(remoteAlice), nil)
	p = &wsPeer{t: t, c: c}
	p.call("1", "initialize", `{"protocolVersion":1}`)
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{"cursor":"`+strings.Repeat("x", 8000)+`"}}`))
	if got := wsClosedWith(t, c); got != 1009 {
		t.Errorf("a message over the limit: closed with %d, want 1009", got)
	}
	// A client that sends nothing.
	c, _, _ = wsDial(t, url, bearerHeader(remoteAlice), nil)
	start := time.Now()
	if got := wsClosedWith(t, c); got != 1008 {
		t.Errorf("a silent client: closed with %d, want 1008", got)
	}
	if e := time.Since(start); e > 10*time.Second {
		t.Errorf("a silent client was closed after %v, want about 500ms", e)
	}
	if !d.running() {
		t.Fatalf("the daemon exited:\n%s", d.stderr)
	}
	if strings.Contains(d.stderr.String(), remoteAlice) {
		t.Errorf("the log shows a token:\n%s", d.stderr)
	}
}

// TestRemoteTokensReloadOnSIGHUP: SIGHUP reads the token file again and
// the daemon goes on serving.
func TestRemoteTokensReloadOnSIGHUP(t *testing.T) {
	dir := doorDir(t)
	tokens := remoteTokens(t, dir)
	d, url := startRemote(t, dir, "--listen", "ws://127.0.0.1:0", "--token-file", tokens)
	if _, _, err := wsDial(t, url, bearerHeader(remoteBob), nil); err != nil {
		t.Fatalf("bob before the reload: %v", err)
	}
	if err := os.WriteFile(tokens, []byte("alice "+remoteAlice+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitFor(t, "reloaded 1 tokens")
	if _, resp, err := wsDial(t, url, bearerHeader(remoteBob), nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("bob after his line was removed: %v %v, want 401", resp, err)
	}
	if _, _, err := wsDial(t, url, bearerHeader(remoteAlice), nil); err != nil {
		t.Errorf("alice after the reload: %v", err)
	}
	// A file others may read is not taken; the tokens in use stay.
	if err := os.Chmod(tokens, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(t, "keeping the tokens in use")
	if _, _, err := wsDial(t, url, bearerHeader(remoteAlice), nil); err != nil {
		t.Errorf("alice after a refused reload: %v", err)
	}
	if !d.running() {
		t.Fatalf("SIGHUP stopped the daemon:\n%s", d.stderr)
	}
}

// TestRemoteStartRules: a listener reachable from other machines needs
// tokens and TLS, or --insecure-listen, which warns.
func TestRemoteStartRules(t *testing.T) {
	dir := doorDir(t)
	cmd := exec.Command(zotBin, "daemon", "--provider", "scripted", "--listen", "ws://0.0.0.0:0")
	cmd.Env = doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "no --token-file and no TLS") {
		t.Errorf("a bare 0.0.0.0 listener: exit %d, %s; want 2 naming what is missing", code, out)
	}
	cmd = exec.Command(zotBin, "daemon", "--provider", "scripted", "--listen", "ws://0.0.0.0:0", "--token-file", remoteTokens(t, dir))
	cmd.Env = doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
	out, err = cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "no TLS") {
		t.Errorf("0.0.0.0 with tokens and without TLS: exit %d, %s; want 2", code, out)
	}
	for _, bad := range [][]string{
		{"--listen", "http://127.0.0.1:0"},
		{"--token-file", "x"},
		{"--listen", "wss://127.0.0.1:0"},
	} {
		cmd = exec.Command(zotBin, append([]string{"daemon", "--provider", "scripted"}, bad...)...)
		cmd.Env = doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
		out, err = cmd.CombinedOutput()
		if exitCode(err) == 0 {
			t.Errorf("%v: started: %s", bad, out)
		}
	}
	// A token file that is a named pipe is refused at once, not waited on.
	fifo := filepath.Join(dir, "tokens-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, zotBin, "daemon", "--provider", "scripted", "--listen", "ws://127.0.0.1:0", "--token-file", fifo)
	cmd.Env = doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "s"))
	cmd.WaitDelay = time.Second
	out, err = cmd.CombinedOutput()
	if ctx.Err() != nil || exitCode(err) == 0 || !strings.Contains(string(out), "not a regular file") {
		t.Errorf("a token file that is a named pipe: %v, %s", err, out)
	}
	cancel()
	d, _ := startRemote(t, dir, "--listen", "ws://0.0.0.0:0", "--insecure-listen")
	if !strings.Contains(d.stderr.String(), "WARNING") {
		t.Errorf("--insecure-listen without a warning:\n%s", d.stderr)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestRemoteTLS: wss:// with a certificate made here.
func TestRemoteTLS(t *testing.T) {
	dir := doorDir(t)
	certFile, keyFile, pool := writeCert(t, dir)
	_, url := startRemote(t, dir, "--listen", "wss://127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "--token-file", remoteTokens(t, dir))
	if !strings.HasPrefix(url, "wss://") {
		t.Fatalf("listener %s", url)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c, _, err := wsDial(t, url, bearerHeader(remoteBob), client)
	if err != nil {
		t.Fatal(err)
	}
	p := &wsPeer{t: t, c: c}
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1}`); f.Error != nil {
		t.Fatalf("initialize over TLS: %s", f.raw)
	}
	if _, _, err := wsDial(t, url, bearerHeader(remoteBob), nil); err == nil {
		t.Error("a client that does not trust the certificate connected")
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zot test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	leaf, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	return certFile, keyFile, pool
}

// TestRemoteTwentyClientsStream: 20 WebSocket clients, each with a
// session, prompt at once; every text arrives whole and in order before
// its answer.
func TestRemoteTwentyClientsStream(t *testing.T) {
	dir := doorDir(t)
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("%03d", i))
	}
	answer := strings.Join(words, " ")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": answer, "chunk": 4}}}}})
	_, url := startRemote(t, dir, "--script", s, "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir))
	work := t.TempDir()
	const clients = 20
	var wg sync.WaitGroup
	for i := range clients {
		token := remoteAlice
		if i%2 == 1 {
			token = remoteBob
		}
		c, _, err := wsDial(t, url, bearerHeader(token), nil)
		if err != nil {
			t.Fatal(err)
		}
		p := &wsPeer{t: t, c: c}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.call("0", "initialize", `{"protocolVersion":1}`)
			f, _ := p.call("1", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
			var nr struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(f.Result, &nr)
			ans, before := p.call(`"p"`, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"count"}]}`, nr.SessionID))
			if ans.Error != nil {
				t.Errorf("client %d: %s", i, ans.raw)
				return
			}
			var text strings.Builder
			for _, f := range before {
				var u struct {
					Update struct {
						Kind    string `json:"sessionUpdate"`
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"update"`
				}
				_ = json.Unmarshal(f.Params, &u)
				if f.Method == "session/update" && u.Update.Kind == "agent_message_chunk" {
					text.WriteString(u.Update.Content.Text)
				}
			}
			if text.String() != answer {
				t.Errorf("client %d: %d bytes of text before the answer, want %d whole and in order", i, text.Len(), len(answer))
			}
		}()
	}
	wg.Wait()
}

// TestRemoteTwoPrincipals: over WebSocket, alice and bob see only their
// own sessions, an admin sees both, the socket's user neither; a
// principal's --max-sessions holds.
func TestRemoteTwoPrincipals(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "s")
	_, url := startRemote(t, dir, "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir), "--max-sessions", "2")
	work := t.TempDir()
	open := func(token string) *wsPeer {
		c, _, err := wsDial(t, url, bearerHeader(token), nil)
		if err != nil {
			t.Fatal(err)
		}
		p := &wsPeer{t: t, c: c}
		p.call("0", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
		return p
	}
	newSession := func(p *wsPeer, id string) string {
		f, _ := p.call(id, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.SessionID == "" {
			t.Fatalf("session/new: %s", f.raw)
		}
		return r.SessionID
	}
	list := func(p *wsPeer) map[string]bool {
		f, _ := p.call(`"l"`, "session/list", `{}`)
		var r struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
			} `json:"sessions"`
		}
		if f.Error != nil || json.Unmarshal(f.Result, &r) != nil {
			t.Fatalf("session/list: %s", f.raw)
		}
		out := map[string]bool{}
		for _, s := range r.Sessions {
			out[s.SessionID] = true
		}
		return out
	}
	alice, bob, root := open(remoteAlice), open(remoteBob), open(remoteRoot)
	a1 := newSession(alice, "1")
	b1 := newSession(bob, "1")
	if got := list(alice); len(got) != 1 || !got[a1] {
		t.Errorf("alice lists %v, want only %s", got, a1)
	}
	if got := list(bob); len(got) != 1 || !got[b1] {
		t.Errorf("bob lists %v, want only %s", got, b1)
	}
	if got := list(root); !got[a1] || !got[b1] {
		t.Errorf("the admin lists %v, want both", got)
	}
	for _, m := range []string{"session/load", "session/resume"} {
		f, _ := bob.call(`"x"`, m, fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, a1, work))
		if f.Error == nil || f.Error.Data["kind"] != "unknown_session" {
			t.Errorf("bob's %s of alice's session: %s, want unknown_session", m, f.raw)
		}
	}
	if f, _ := bob.call(`"d"`, "session/delete", fmt.Sprintf(`{"sessionId":%q}`, a1)); f.Error == nil || f.Error.Data["kind"] != "unknown_session" {
		t.Errorf("bob's session/delete of alice's session: %s", f.raw)
	}
	// The socket's user sees none of theirs.
	dp, _ := dialDoor(t, sock)
	sp := checked(t, dp)
	sp.call("0", "initialize", `{"protocolVersion":1}`, "")
	lf, _ := sp.call("1", "session/list", `{}`, "")
	if strings.Contains(string(lf.Result), a1) || strings.Contains(string(lf.Result), b1) {
		t.Errorf("the socket's user lists the principals' sessions: %s", lf.Result)
	}
	// The cap: alice's third session is refused; bob has his own places.
	newSession(alice, "2")
	if f, _ := alice.call("3", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work)); f.Error == nil || f.Error.Data["kind"] != "limit_exceeded" {
		t.Errorf("alice's third session: %s, want limit_exceeded", f.raw)
	}
	newSession(bob, "2")
}

// TestRemoteReconnectAnswersPermission: a client whose connection drops
// while the turn waits for its permission answer comes back, resumes the
// session, and is asked again; its answer lets the call run.
func TestRemoteReconnectAnswersPermission(t *testing.T) {
	dir := doorDir(t)
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "Writing.", "tool_calls": []any{map[string]any{"id": "w1", "name": "write", "args": map[string]any{"path": "a.txt", "content": "hello\n"}}}},
		map[string]any{"text": "Done."},
	}}}})
	_, url := startRemote(t, dir, "--script", s, "--permission", "ask", "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir))
	work := t.TempDir()
	dialAs := func(token string) *wsPeer {
		c, _, err := wsDial(t, url, bearerHeader(token), nil)
		if err != nil {
			t.Fatal(err)
		}
		p := &wsPeer{t: t, c: c}
		p.call("0", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
		return p
	}
	a := dialAs(remoteAlice)
	f, _ := a.call("1", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
	var nr struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(f.Result, &nr)
	a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"write"}]}}`, nr.SessionID))
	for {
		if f := a.next(); f.Method == "session/request_permission" {
			break
		}
	}
	_ = a.c.CloseNow() // the network goes away before the answer

	b := dialAs(remoteAlice)
	if f, _ := b.call("1", "session/resume", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, nr.SessionID, work)); f.Error != nil {
		t.Fatalf("session/resume: %s", f.raw)
	}
	var asked wsFrame
	for {
		if asked = b.next(); asked.Method == "session/request_permission" {
			break
		}
	}
	if !strings.Contains(string(asked.Params), `"w1"`) {
		t.Errorf("the question asked again is not the write's: %s", asked.raw)
	}
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`, asked.ID))
	deadline := time.Now().Add(hangGuard)
	for {
		if data, err := os.ReadFile(filepath.Join(work, "a.txt")); err == nil && string(data) == "hello\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the write the resumed client allowed did not run")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRemoteStalledReaderAndHalfOpen: a WebSocket client that stops
// reading while its turn streams is disconnected after
// --client-stall-timeout, as a socket client is; one whose network goes
// away (no FIN, no pong) is closed after --keepalive. The daemon serves
// the next client either way.
func TestRemoteStalledReaderAndHalfOpen(t *testing.T) {
	dir := doorDir(t)
	long := strings.Repeat("abcd", 200000)
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": long, "chunk": 4}}}}})
	d, url := startRemote(t, dir, "--script", s, "--listen", "ws://127.0.0.1:0", "--client-stall-timeout", "1s", "--keepalive", "300ms")
	work := t.TempDir()
	c, _, err := wsDial(t, url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &wsPeer{t: t, c: c}
	p.call("0", "initialize", `{"protocolVersion":1}`)
	f, _ := p.call("1", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work))
	var nr struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(f.Result, &nr)
	// The client library answers pings only while it reads: this client
	// reads nothing from here on, so only the stall rule (not the
	// keepalive) may end it... unless the keepalive comes first, which
	// the log tells apart.
	start := time.Now()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, nr.SessionID))
	d.waitFor(t, "left: ")
	if e := time.Since(start); e > 30*time.Second {
		t.Errorf("the client that stopped reading was let go after %v", e)
	}
	log := d.stderr.String()
	if !strings.Contains(log, "stopped reading") && !strings.Contains(log, "no pong") {
		t.Errorf("the client was let go for another reason:\n%s", log)
	}

	// A half-open connection: a proxy that stops forwarding both ways
	// stands for a network gone without a FIN.
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/acp")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	frozen := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		in, err := ln.Accept()
		if err != nil {
			return
		}
		defer in.Close()
		out, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		defer out.Close()
		pipe := func(dst, src net.Conn) {
			buf := make([]byte, 4096)
			for {
				n, err := src.Read(buf)
				if err != nil {
					_ = dst.Close()
					return
				}
				select {
				case <-frozen:
					continue
				default:
				}
				_, _ = dst.Write(buf[:n])
			}
		}
		go pipe(out, in)
		pipe(in, out)
	}()
	hc, _, err := wsDial(t, "ws://"+ln.Addr().String()+"/acp", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			if _, _, err := hc.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	_ = hc.Write(context.Background(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
	d.waitFor(t, "connected")
	before := strings.Count(d.stderr.String(), "left")
	time.Sleep(time.Second) // pings answered: it stays
	if n := strings.Count(d.stderr.String(), "left"); n != before {
		t.Fatalf("a client that answers pings was let go:\n%s", d.stderr)
	}
	close(frozen)
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(d.stderr.String(), "no pong within") {
		if time.Now().After(deadline) {
			t.Fatalf("the half-open connection was not closed:\n%s", d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = hc.CloseNow()
	<-readDone
	_ = ln.Close()

	// The daemon serves the next client.
	c2, _, err := wsDial(t, url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := (&wsPeer{t: t, c: c2}).call("0", "initialize", `{"protocolVersion":1}`); f.Error != nil {
		t.Fatalf("after both: %s", f.raw)
	}
}
