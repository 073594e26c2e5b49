package wsserve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"zot.dev/zot/internal/jsonrpc"
)

const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-0123456789abcdef01"
	rootToken  = "root-token-0123456789abcdef0"
)

// writeTokens writes a token file with alice, bob and an admin.
func writeTokens(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	body := "# who may connect\nalice " + aliceToken + "\n\nbob " + bobToken + "\nroot " + rootToken + " admin\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serving is a Server with a jsonrpc dispatcher that answers initialize
// and whoami (the peer's principal), and echo.
type serving struct {
	s     *Server
	url   string
	peers chan jsonrpc.Peer
}

func serve(t *testing.T, cfg Config) *serving {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = "ws://127.0.0.1:0"
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	sv := &serving{s: s, url: s.Addr(), peers: make(chan jsonrpc.Peer, 64)}
	h := jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
		switch req.Method {
		case "initialize":
			return jsonrpc.Result(map[string]any{"protocolVersion": 1})
		case "whoami":
			p := c.Peer()
			return jsonrpc.Result(map[string]any{"principal": p.Principal, "admin": p.Admin, "transport": p.Transport})
		case "echo":
			return jsonrpc.Result(req.Params)
		}
		return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- jsonrpc.Serve(ctx, s, jsonrpc.Static(h), jsonrpc.Options{}, jsonrpc.ServeHooks{
			Opened: func(c *jsonrpc.Conn) { sv.peers <- c.Peer() },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return sv
}

func dial(t *testing.T, url string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, opts)
	if c != nil {
		t.Cleanup(func() { _ = c.CloseNow() })
	}
	return c, resp, err
}

func withToken(token string) *websocket.DialOptions {
	return &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}}
}

// call sends one request and reads its answer.
func call(t *testing.T, c *websocket.Conn, id int, method string, params any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	msg, _ := json.Marshal(m)
	if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatalf("writing %s: %v", method, err)
	}
	typ, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", method, err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("the answer to %s came as %v, want a text message", method, typ)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("the answer to %s is not JSON: %q", method, data)
	}
	return out
}

// closedWith reads until the connection ends and returns its close code.
func closedWith(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the server did not close the connection")
			}
			return websocket.CloseStatus(err)
		}
	}
}

func TestInitializeThenMessagesWithTheTokensPrincipal(t *testing.T) {
	tokens, err := LoadTokens(writeTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	sv := serve(t, Config{Tokens: tokens})
	for _, tc := range []struct {
		token, name string
		admin       bool
	}{{aliceToken, "alice", false}, {bobToken, "bob", false}, {rootToken, "root", true}} {
		c, resp, err := dial(t, sv.url, withToken(tc.token))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if id := resp.Header.Get(ConnectionIDHeader); len(id) != 32 {
			t.Errorf("the 101 answer's %s is %q, want a connection id", ConnectionIDHeader, id)
		}
		if got := call(t, c, 1, "initialize", map[string]any{"protocolVersion": 1}); got["result"] == nil {
			t.Fatalf("initialize: %v", got)
		}
		got := call(t, c, 2, "whoami", nil)["result"].(map[string]any)
		if got["principal"] != tc.name || got["admin"] != tc.admin || got["transport"] != "ws" {
			t.Errorf("whoami = %v, want principal %s admin %v over ws", got, tc.name, tc.admin)
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
}

func TestSubprotocolToken(t *testing.T) {
	tokens, err := LoadTokens(writeTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	sv := serve(t, Config{Tokens: tokens})
	c, resp, err := dial(t, sv.url, &websocket.DialOptions{Subprotocols: []string{Subprotocol, TokenSubprotocolPrefix + bobToken}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != Subprotocol {
		t.Errorf("the selected subprotocol is %q, want %q (never the token)", got, Subprotocol)
	}
	call(t, c, 1, "initialize", nil)
	if got := call(t, c, 2, "whoami", nil)["result"].(map[string]any); got["principal"] != "bob" {
		t.Errorf("whoami = %v, want bob", got)
	}
}

func TestRefusedBeforeTheUpgrade(t *testing.T) {
	tokens, err := LoadTokens(writeTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	sv := serve(t, Config{Tokens: tokens, AllowOrigins: []string{"https://editor.example"}})
	for _, tc := range []struct {
		name string
		opts *websocket.DialOptions
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"a wrong token", withToken("not-a-token-of-the-file-0000"), http.StatusUnauthorized},
		{"a token of another scheme", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Basic " + aliceToken}}}, http.StatusUnauthorized},
		{"a foreign Origin", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + aliceToken}, "Origin": {"https://evil.example"}}}, http.StatusForbidden},
	} {
		_, resp, err := dial(t, sv.url, tc.opts)
		if err == nil {
			t.Errorf("%s: the upgrade succeeded", tc.name)
			continue
		}
		if resp == nil || resp.StatusCode != tc.want {
			t.Errorf("%s: %v (%v), want HTTP %d", tc.name, resp, err, tc.want)
		}
	}
	// A listed origin is served.
	c, _, err := dial(t, sv.url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + aliceToken}, "Origin": {"https://Editor.example:443"}}})
	if err != nil {
		t.Fatalf("a listed origin: %v", err)
	}
	call(t, c, 1, "initialize", nil)
}

func TestPlainHTTPAndProbes(t *testing.T) {
	tokens, err := LoadTokens(writeTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	sv := serve(t, Config{Tokens: tokens})
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(sv.url, "ws://"), "/acp")
	do := func(method, path string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	auth := map[string]string{"Authorization": "Bearer " + aliceToken}
	for _, tc := range []struct {
		method, path string
		hdr          map[string]string
		want         int
	}{
		{"GET", "/healthz", nil, 200},
		{"GET", "/readyz", nil, 200},
		{"GET", "/acp", nil, 401},
		{"GET", "/acp", auth, 400},
		{"GET", "/acp", map[string]string{"Authorization": auth["Authorization"], ConnectionIDHeader: "abc"}, 404},
		{"POST", "/acp", auth, 426},
		{"DELETE", "/acp", auth, 400},
		{"PUT", "/acp", auth, 405},
		{"GET", "/other", nil, 404},
	} {
		if got := do(tc.method, tc.path, tc.hdr); got.StatusCode != tc.want {
			t.Errorf("%s %s %v: %d, want %d", tc.method, tc.path, tc.hdr, got.StatusCode, tc.want)
		}
	}
	sv.s.SetReady(false)
	if got := do("GET", "/readyz", nil); got.StatusCode != 503 {
		t.Errorf("/readyz while not ready: %d, want 503", got.StatusCode)
	}
}

func TestProtocolViolationsClose(t *testing.T) {
	sv := serve(t, Config{MaxMessageBytes: 4096, HandshakeTimeout: 300 * time.Millisecond})
	ctx := context.Background()

	// The first message must be initialize: 1002.
	c, _, err := dial(t, sv.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/list"}`))
	if got := closedWith(t, c); got != CloseProtocolError {
		t.Errorf("a first message other than initialize: closed with %d, want 1002", got)
	}

	// A binary message: 1003.
	c, _, _ = dial(t, sv.url, nil)
	call(t, c, 1, "initialize", nil)
	_ = c.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":2,"method":"echo"}`))
	if got := closedWith(t, c); got != CloseUnsupportedData {
		t.Errorf("a binary message: closed with %d, want 1003", got)
	}

	// A message over the limit: 1009.
	c, _, _ = dial(t, sv.url, nil)
	call(t, c, 1, "initialize", nil)
	big := `{"jsonrpc":"2.0","id":2,"method":"echo","params":{"x":"` + strings.Repeat("a", 8192) + `"}}`
	_ = c.Write(ctx, websocket.MessageText, []byte(big))
	if got := closedWith(t, c); got != CloseTooBig {
		t.Errorf("a message over the limit: closed with %d, want 1009", got)
	}

	// One that sends nothing: 1008 after the handshake deadline.
	c, _, _ = dial(t, sv.url, nil)
	start := time.Now()
	if got := closedWith(t, c); got != ClosePolicyViolation {
		t.Errorf("a silent client: closed with %d, want 1008", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a silent client was closed after %v, want about 300ms", d)
	}

	// A message within the limit still works after all that.
	c, _, _ = dial(t, sv.url, nil)
	call(t, c, 1, "initialize", nil)
	if got := call(t, c, 2, "echo", map[string]string{"x": "y"}); got["result"].(map[string]any)["x"] != "y" {
		t.Errorf("echo = %v", got)
	}
}

// TestHalfOpenPeer: a client whose network went away (it answers no
// ping, its TCP connection stays) is closed after the keepalive.
func TestHalfOpenPeer(t *testing.T) {
	sv := serve(t, Config{PingInterval: 200 * time.Millisecond})
	// A TCP proxy that stops forwarding both ways on demand stands for
	// the network going away without a FIN.
	addr := strings.TrimSuffix(strings.TrimPrefix(sv.url, "ws://"), "/acp")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var (
		frozen = make(chan struct{})
		wg     sync.WaitGroup
	)
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
					return
				}
				select {
				case <-frozen:
					continue // swallowed: nothing reaches the other side
				default:
				}
				_, _ = dst.Write(buf[:n])
			}
		}
		go pipe(out, in)
		pipe(in, out)
	}()
	c, _, err := dial(t, "ws://"+ln.Addr().String()+"/acp", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The client library answers pings while it reads.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	call0 := func() {
		msg := `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
		_ = c.Write(context.Background(), websocket.MessageText, []byte(msg))
	}
	call0()
	peer := <-sv.peers
	time.Sleep(600 * time.Millisecond) // pings answered: still open
	if n := sv.s.Connections()["anonymous"]; n != 1 {
		t.Fatalf("the connection closed while its peer answered pings (open: %d)", n)
	}
	close(frozen)
	deadline := time.Now().Add(5 * time.Second)
	for sv.s.Connections()["anonymous"] != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the half-open connection of %s is still open 5s after its network went away", peer.Label)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.CloseNow()
	<-readDone
	_ = ln.Close()
}

func TestConnectionCap(t *testing.T) {
	tokens, err := LoadTokens(writeTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	sv := serve(t, Config{Tokens: tokens, MaxConnections: 2})
	var open []*websocket.Conn
	for range 2 {
		c, _, err := dial(t, sv.url, withToken(aliceToken))
		if err != nil {
			t.Fatal(err)
		}
		call(t, c, 1, "initialize", nil)
		open = append(open, c)
	}
	_, resp, err := dial(t, sv.url, withToken(aliceToken))
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a third connection of alice: %v %v, want 429", resp, err)
	}
	// Another principal has places of its own.
	if _, _, err := dial(t, sv.url, withToken(bobToken)); err != nil {
		t.Fatalf("bob: %v", err)
	}
	// A place comes back when a connection closes.
	_ = open[0].Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, _, err := dial(t, sv.url, withToken(aliceToken))
		if err == nil {
			call(t, c, 1, "initialize", nil)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's place did not come back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	sv := serve(t, Config{URL: "wss://127.0.0.1:0", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if !strings.HasPrefix(sv.url, "wss://") {
		t.Fatalf("Addr = %s", sv.url)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c, _, err := dial(t, sv.url, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	call(t, c, 1, "initialize", nil)
	// A client that does not trust the certificate is refused by TLS.
	if _, _, err := dial(t, sv.url, nil); err == nil {
		t.Error("a client without the certificate's root connected")
	}
	// ws:// to a TLS port is not served.
	if _, _, err := dial(t, strings.Replace(sv.url, "wss://", "ws://", 1), nil); err == nil {
		t.Error("ws:// to the wss:// listener connected")
	}
}

func TestListenRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1", "ws://127.0.0.1", "ws://127.0.0.1:0/other", "wss://127.0.0.1:0", "ws://u:p@127.0.0.1:0"} {
		if s, err := Listen(Config{URL: u}); err == nil {
			_ = s.Close()
			t.Errorf("Listen(%s) succeeded", u)
		}
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string, mode os.FileMode) string {
		p := filepath.Join(dir, "t")
		_ = os.Remove(p)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		body string
		mode os.FileMode
		want string
	}{
		{"alice " + aliceToken + "\n", 0o644, "chmod 600"},
		{"alice " + aliceToken + "\n", 0o640, "chmod 600"},
		{"alice short\n", 0o600, "shorter than"},
		{"alice " + aliceToken + " root\n", 0o600, "NAME TOKEN admin"},
		{"alice " + aliceToken + "\nalice " + bobToken + "\n", 0o600, "named already"},
		{"alice " + aliceToken + "\nbob " + aliceToken + "\n", 0o600, "its own"},
		{"al:ice " + aliceToken + "\n", 0o600, "letters, digits"},
		{"alice " + aliceToken + "/=\n", 0o600, "holds"},
		{"# nobody\n", 0o600, "names no principal"},
	} {
		_, err := LoadTokens(write(tc.body, tc.mode))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q mode %o: %v, want an error saying %q", tc.body, tc.mode, err, tc.want)
		}
	}
	// A symbolic link is not followed.
	real := write("alice "+aliceToken+"\n", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokens(link); err == nil {
		t.Error("a symbolic link to the token file was followed")
	}
	// Reload keeps what is in use when the new file is bad, and takes a
	// good one.
	tk, err := LoadTokens(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tk.Reload(); err == nil {
		t.Error("Reload took a file others may read")
	}
	if _, ok := tk.Lookup(aliceToken); !ok {
		t.Error("a failed Reload dropped the tokens in use")
	}
	write("bob "+bobToken+" admin\n", 0o600)
	if err := tk.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, ok := tk.Lookup(aliceToken); ok {
		t.Error("alice's token survived a Reload that removed it")
	}
	if p, ok := tk.Lookup(bobToken); !ok || !p.Admin || p.Name != "bob" {
		t.Errorf("Lookup(bob) = %v %v", p, ok)
	}
	if _, ok := tk.Lookup(""); ok {
		t.Error("an empty token matched")
	}
}

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts
// it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zot test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestHandleMountsBehindTheChecks: a handler mounted with Handle gets
// only requests with a valid token and an allowed Origin, and learns the
// principal.
func TestHandleMountsBehindTheChecks(t *testing.T) {
	tokens, err := LoadTokens(writeTokens(t))
	if err != nil {
		t.Fatal(err)
	}
	sv := serve(t, Config{Tokens: tokens})
	sv.s.Handle("/inspect/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PrincipalOf(r)
		if !ok {
			t.Error("no principal in a mounted handler's request")
		}
		_, _ = io.WriteString(w, p.Name)
	}))
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(sv.url, "ws://"), "/acp")
	get := func(hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", base+"/inspect/x", nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(nil); code != 401 {
		t.Errorf("without a token: %d, want 401", code)
	}
	if code, _ := get(map[string]string{"Authorization": "Bearer " + bobToken, "Origin": "https://evil.example"}); code != 403 {
		t.Errorf("a foreign Origin: %d, want 403", code)
	}
	if code, body := get(map[string]string{"Authorization": "Bearer " + bobToken}); code != 200 || body != "bob" {
		t.Errorf("bob: %d %q, want 200 bob", code, body)
	}
}
