package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/schemacheck"
)

// testAgent is an Agent over the scripted provider, with its sessions in
// a temporary directory, whose every frame both ways is checked against
// the ACP schema when the test ends.
type testAgent struct {
	t     *testing.T
	a     *Agent
	host  *engine.Host
	dir   string
	conv  *schemacheck.ACPConversation
	conns []*jsonrpc.Conn
	// agentTap and clientTap, when set, see the messages of each
	// connection made after they were set, at the agent's end and at the
	// client's.
	agentTap, clientTap func(jsonrpc.Traffic)
}

// newTestAgent starts an agent playing script (JSON) in dir (a new one
// when empty) under permission policy perm.
func newTestAgent(t *testing.T, dir, script, perm string) *testAgent {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	scriptPath := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	host := engine.NewHost(engine.HostConfig{Providers: map[string]engine.ProviderSettings{"scripted": {Script: scriptPath}}})
	a, err := New(Options{
		Host:        host,
		Defaults:    engine.SessionConfig{Provider: "scripted"},
		Permission:  perm,
		SessionsDir: filepath.Join(dir, "sessions"),
		Version:     "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	ta := &testAgent{t: t, a: a, host: host, dir: dir, conv: &schemacheck.ACPConversation{}}
	t.Cleanup(func() { ta.stop() })
	return ta
}

// stop closes every connection and the agent, and checks the frames.
func (ta *testAgent) stop() {
	if ta.a == nil {
		return
	}
	for _, c := range ta.conns {
		c.Close()
		c.Wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ta.a.Close(ctx); err != nil {
		ta.t.Errorf("closing the agent: %v", err)
	}
	ta.host.Close()
	ta.a = nil
	if err := ta.conv.Err(); err != nil {
		ta.t.Error(err)
	}
}

// client is the client end of one connection.
type client struct {
	t  *testing.T
	c  *jsonrpc.Conn
	mu sync.Mutex
	// updates are the session/update notifications received, in order.
	updates []acp.SessionNotification
	// permission answers each session/request_permission: an option id,
	// or "" to answer cancelled. It may block until ctx ends.
	permission func(ctx context.Context, req acp.RequestPermissionRequest) string
	asked      []acp.RequestPermissionRequest
	// unchecked, while set, leaves the frames the client sends out of the
	// schema check: the test sends bad input on purpose.
	unchecked atomic.Bool
}

// connect opens a connection to the agent. Each conversation gets its own
// checker, since ids are per connection.
func (ta *testAgent) connect() *client {
	return ta.connectAs(jsonrpc.Peer{Transport: "test", Label: "test"})
}

// connectAs opens a connection whose agent end sees peer (a principal).
func (ta *testAgent) connectAs(peer jsonrpc.Peer) *client {
	conv := &schemacheck.ACPConversation{}
	ta.t.Cleanup(func() {
		if err := conv.Err(); err != nil {
			ta.t.Error(err)
		}
	})
	cl := &client{t: ta.t}
	cl.permission = func(context.Context, acp.RequestPermissionRequest) string { return "allow_once" }
	a, b := jsonrpc.NewPipe()
	if ta.agentTap != nil {
		a = jsonrpc.Tap(a, ta.agentTap)
	}
	if ta.clientTap != nil {
		b = jsonrpc.Tap(b, ta.clientTap)
	}
	agentConn := jsonrpc.NewConn(a, peer, ta.a.Handler, jsonrpc.Options{
		Check: func(frame []byte) error { conv.Frame(false, frame); return nil },
	})
	cl.c = jsonrpc.NewConn(b, jsonrpc.Peer{Transport: "test", Label: "client"}, jsonrpc.Static(cl), jsonrpc.Options{
		Check: func(frame []byte) error {
			if cl.unchecked.Load() {
				conv.Skip(true, frame)
			} else {
				conv.Frame(true, frame)
			}
			return nil
		},
	})
	ta.conns = append(ta.conns, cl.c, agentConn)
	return cl
}

// Handle serves what the agent sends the client.
func (cl *client) Handle(_ context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
	switch req.Method {
	case acp.MethodSessionUpdate:
		var n acp.SessionNotification
		if err := json.Unmarshal(req.Params, &n); err != nil {
			cl.t.Errorf("session/update does not decode: %v: %s", err, req.Params)
		}
		cl.mu.Lock()
		cl.updates = append(cl.updates, n)
		cl.mu.Unlock()
		return jsonrpc.Result(nil)
	case acp.MethodSessionRequestPermission:
		var p acp.RequestPermissionRequest
		if err := json.Unmarshal(req.Params, &p); err != nil {
			cl.t.Errorf("session/request_permission does not decode: %v", err)
		}
		cl.mu.Lock()
		cl.asked = append(cl.asked, p)
		answer := cl.permission
		cl.mu.Unlock()
		return jsonrpc.Async(func(ctx context.Context) (any, error) {
			opt := answer(ctx, p)
			if opt == "" {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &struct{}{}}}, nil
			}
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionID: acp.PermissionOptionId(opt)}}}, nil
		})
	}
	return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
}

// call sends a request and decodes its result into out (when not nil).
func (cl *client) call(method string, params, out any) error {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, err := cl.c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			cl.t.Fatalf("%s: result does not decode: %v: %s", method, err, raw)
		}
	}
	return nil
}

// must is call that fails the test on an error.
func (cl *client) must(method string, params, out any) {
	cl.t.Helper()
	if err := cl.call(method, params, out); err != nil {
		cl.t.Fatalf("%s: %v", method, err)
	}
}

// init sends initialize.
func (cl *client) init() acp.InitializeResponse {
	cl.t.Helper()
	var res acp.InitializeResponse
	cl.must(acp.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, &res)
	return res
}

// newSession opens a session in cwd.
func (cl *client) newSession(cwd string) string {
	cl.t.Helper()
	var res acp.NewSessionResponse
	cl.must(acp.MethodSessionNew, acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}}, &res)
	return string(res.SessionID)
}

// prompt sends text and returns the stop reason.
func (cl *client) prompt(id, text string) (acp.StopReason, error) {
	cl.t.Helper()
	var res acp.PromptResponse
	err := cl.call(acp.MethodSessionPrompt, acp.PromptRequest{SessionID: acp.SessionId(id), Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}, &res)
	return res.StopReason, err
}

// bad sends a request the test knows to be wrong, outside the schema
// check, and returns its error.
func (cl *client) bad(method string, params any) error {
	cl.t.Helper()
	cl.unchecked.Store(true)
	defer cl.unchecked.Store(false)
	return cl.call(method, params, nil)
}

// notify sends a notification.
func (cl *client) notify(method string, params any) {
	cl.t.Helper()
	if err := cl.c.Notify(context.Background(), method, params); err != nil {
		cl.t.Fatal(err)
	}
}

// updatesOf returns the updates received for session id.
func (cl *client) updatesOf(id string) []acp.SessionUpdate {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var out []acp.SessionUpdate
	for _, n := range cl.updates {
		if string(n.SessionID) == id {
			out = append(out, n.Update)
		}
	}
	return out
}

// text joins the chunks of one kind of session id's updates.
func (cl *client) text(id, kind string) string {
	var b strings.Builder
	for _, u := range cl.updatesOf(id) {
		var c *acp.ContentChunk
		switch kind {
		case "agent":
			c = u.AgentMessageChunk
		case "user":
			c = u.UserMessageChunk
		case "thought":
			c = u.AgentThoughtChunk
		}
		if c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// waitFor waits until cond holds, failing the test after a long while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// errKind returns the data.kind and code of a JSON-RPC error answer.
func errKind(t *testing.T, err error) (string, int64, bool) {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return e.Kind, e.Code, e.Retryable
}
