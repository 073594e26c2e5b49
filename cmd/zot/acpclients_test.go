package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/sdk/acpclient"
)

// cutProxy relays loopback TCP connections to a target and can cut them
// all at once, as a network that goes away does, while it keeps
// accepting new ones.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startCutProxy relays 127.0.0.1:PORT to the host:port of target.
func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.copy(up, c)
		go p.copy(c, up)
	}
}

func (p *cutProxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut closes every connection relayed so far.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// url is the proxy's ws:// URL (without a path: the clients add /acp).
func (p *cutProxy) url() string { return "ws://" + p.ln.Addr().String() }

// hostOf returns host:port of a ws:// URL.
func hostOf(t *testing.T, url string) string {
	t.Helper()
	rest := strings.TrimPrefix(url, "ws://")
	host, _, _ := strings.Cut(rest, "/")
	if host == "" {
		t.Fatalf("no host in %s", url)
	}
	return host
}

// slowWords is an answer of n words that streams for a while.
func slowWords(n int) string {
	var words []string
	for i := range n {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	return strings.Join(words, " ") + " THE END"
}

// acpScript is the scripted provider's turns every ACP client test plays:
// a write that asks permission, a slow answer the client cancels, a slow
// answer during which the connection is cut.
func acpScript(t *testing.T) (path, slow string) {
	slow = slowWords(40)
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"text": "Writing.", "tool_calls": []any{map[string]any{"id": "w1", "name": "write", "args": map[string]any{"path": "a.txt", "content": "hello\n"}}}},
			map[string]any{"text": "Done."},
		}},
		map[string]any{"steps": []any{map[string]any{"text": "a long and slow answer that the client cancels", "chunk": 2, "delay_ms": 200}}},
		map[string]any{"steps": []any{map[string]any{"text": slow, "chunk": 4, "delay_ms": 50}}},
		map[string]any{"steps": []any{
			map[string]any{"text": "Writing again.", "tool_calls": []any{map[string]any{"id": "w2", "name": "write", "args": map[string]any{"path": "b.txt", "content": "again\n"}}}},
			map[string]any{"text": "Written."},
		}},
	}}), slow
}

// seen gathers the text of a client's updates.
type seen struct {
	mu    sync.Mutex
	text  strings.Builder
	perms []string
	// cutAt, when set, is called (once) at the first question about
	// the call of this id, before it is answered.
	cutAt string
	cut   func()
}

func (s *seen) update(n acpclient.Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		s.text.WriteString(c.Content.Text.Text)
	}
	if c := n.Update.UserMessageChunk; c != nil && c.Content.Text != nil {
		s.text.WriteString("[user]" + c.Content.Text.Text)
	}
}

func (s *seen) permission(_ context.Context, r acpclient.PermissionRequest) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := string(r.ToolCall.ToolCallID)
	s.perms = append(s.perms, id)
	if id == s.cutAt && s.cut != nil {
		s.cut()
		s.cut = nil
	}
	return "allow_once"
}

func (s *seen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// waitText waits until the updates hold want.
func (s *seen) waitText(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the updates: %q", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// acpClientTurns plays the first two turns of acpScript: a prompt whose
// write asks permission, and a prompt cancelled mid-answer.
func acpClientTurns(t *testing.T, ctx context.Context, c *acpclient.Client, s *seen, work string) string {
	t.Helper()
	sid, err := c.NewSession(ctx, work)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Prompt(ctx, sid, "write a.txt")
	if err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if len(s.perms) != 1 {
		t.Errorf("permission requests %v, want one", s.perms)
	}
	if data, err := os.ReadFile(filepath.Join(work, "a.txt")); err != nil || string(data) != "hello\n" {
		t.Errorf("a.txt: %q %v", data, err)
	}
	done := make(chan acpclient.PromptResult, 1)
	go func() {
		res, err := c.Prompt(ctx, sid, "a slow one")
		if err != nil {
			t.Errorf("the cancelled prompt: %v", err)
		}
		done <- res
	}()
	s.waitText(t, "a long")
	if err := c.Cancel(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.StopReason != "cancelled" {
		t.Errorf("after cancel: %+v", res)
	}
	return sid
}

// TestACPClientGoRemote: sdk/acpclient against zot daemon --listen with a
// token file, through a proxy that cuts the connection: initialize, new,
// a prompt with a permission request, cancel, a connection cut mid-answer
// whose updates go on after the reconnect, load on a new connection; a
// wrong token refused with a clear error.
func TestACPClientGoRemote(t *testing.T) {
	dir := doorDir(t)
	s, slow := acpScript(t)
	_, url := startRemote(t, dir, "--script", s, "--permission", "ask", "--listen", "ws://127.0.0.1:0", "--token-file", remoteTokens(t, dir))
	proxy := startCutProxy(t, hostOf(t, url))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	_, err := acpclient.Dial(ctx, proxy.url(), acpclient.Options{Token: "wrong-0123456789abcdef0123"})
	var refused *acpclient.RefusedError
	if !errors.As(err, &refused) || refused.Status != 401 || !strings.Contains(err.Error(), "refused the token") {
		t.Fatalf("a wrong token: %v", err)
	}

	got := &seen{}
	c, err := acpclient.Dial(ctx, proxy.url(), acpclient.Options{Token: remoteAlice, OnUpdate: got.update, OnPermission: got.permission})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	work := t.TempDir()
	sid := acpClientTurns(t, ctx, c, got, work)

	// The connection is cut mid-answer: the rest of the answer comes on
	// the new one, and the prompt returns once the turn has ended.
	done := make(chan acpclient.PromptResult, 1)
	go func() {
		res, err := c.Prompt(ctx, sid, "a long one")
		if err != nil {
			t.Errorf("the prompt across the cut: %v", err)
		}
		done <- res
	}()
	got.waitText(t, "w04")
	proxy.cut()
	if res := <-done; !res.Reconnected {
		t.Errorf("the prompt across the cut: %+v, want Reconnected", res)
	}
	if !strings.Contains(got.String(), "THE END") {
		t.Errorf("the end of the answer did not come after the reconnect: %q", got.String())
	}

	// A new connection loads the session: the whole answer is replayed.
	again := &seen{}
	c2, err := acpclient.Dial(ctx, proxy.url(), acpclient.Options{Token: remoteAlice, OnUpdate: again.update})
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.LoadSession(ctx, sid, work); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	if !strings.Contains(again.String(), slow) || !strings.Contains(again.String(), "[user]write a.txt") {
		t.Errorf("the load replayed %q", again.String())
	}

	// The connection is cut while a permission question waits: the
	// daemon asks again on the resumed connection, whose answer lets the
	// call run.
	got.mu.Lock()
	got.cutAt, got.cut = "w2", proxy.cut
	got.mu.Unlock()
	res, err := c.Prompt(ctx, sid, "write b.txt")
	if err != nil || !res.Reconnected {
		t.Fatalf("the prompt across the cut: %+v %v", res, err)
	}
	if data, err := os.ReadFile(filepath.Join(work, "b.txt")); err != nil || string(data) != "again\n" {
		t.Errorf("b.txt after the question was asked again: %q %v", data, err)
	}
	got.mu.Lock()
	asked := strings.Count(strings.Join(got.perms, " "), "w2")
	got.mu.Unlock()
	if asked != 2 {
		t.Errorf("questions about w2: %d, want 2 (%v)", asked, got.perms)
	}
}

// TestACPClientGoSpawn: sdk/acpclient starting zot acp: initialize, new, a
// prompt with a permission request, cancel; a second zot acp loads the
// session.
func TestACPClientGoSpawn(t *testing.T) {
	dir := doorDir(t)
	s, _ := acpScript(t)
	env := doorEnv(filepath.Join(dir, "home"))
	cmd := []string{zotBin, "acp", "--provider", "scripted", "--script", s, "--permission", "ask"}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	got := &seen{}
	c, err := acpclient.Spawn(ctx, acpclient.Options{Command: cmd, Env: env, OnUpdate: got.update, OnPermission: got.permission})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	sid := acpClientTurns(t, ctx, c, got, work)
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	again := &seen{}
	c2, err := acpclient.Spawn(ctx, acpclient.Options{Command: cmd, Env: env, OnUpdate: again.update})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.LoadSession(ctx, sid, work); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(again.String(), "[user]write a.txt") || !strings.Contains(again.String(), "Done.") {
		t.Errorf("the load replayed %q", again.String())
	}
}
