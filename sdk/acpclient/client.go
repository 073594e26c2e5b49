// Package acpclient is a Go client of zot's Agent Client Protocol door:
// a daemon's WebSocket endpoint (`zot daemon --listen ws://…`, reached
// by URL with a bearer token) or a `zot acp` subprocess it starts. It
// makes the handshake, opens sessions (new, load, resume), prompts with
// the session's updates streamed to a callback, answers the agent's
// permission questions with another, and cancels.
//
// Over WebSocket a dropped connection is dialed again and the sessions
// the client had open are resumed (session/resume): a turn under way goes
// on in the daemon, and its updates reach the new connection from the
// moment it resumed. What the daemon sent to the lost connection is not
// sent again (the session file has it: LoadSession replays it). A Prompt
// whose connection dropped returns, once the turn has ended, with
// Reconnected set and no stop reason: the answer went to the lost
// connection.
//
// The types are the generated ones of the protocol (schema/acp, and zot's
// own methods in schema/daemon), under their names here.
//
//	c, err := acpclient.Dial(ctx, "ws://127.0.0.1:8765", acpclient.Options{Token: token,
//		Output: os.Stdout, OnPermission: acpclient.AllowOnce})
//	id, err := c.NewSession(ctx, "/srv/work")
//	res, err := c.Prompt(ctx, id, "hello")
package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/acpdial"
	"zot.dev/zot/internal/jsonrpc"
)

// The protocol's types this package speaks in.
type (
	// Update is a session/update: one update of a session's turn (a
	// chunk of the answer, a tool call, its result, the usage, …).
	Update = acp.SessionNotification
	// PermissionRequest is a session/request_permission: the agent asks
	// before a tool call runs.
	PermissionRequest = acp.RequestPermissionRequest
	// InitializeResponse is the agent's answer to initialize.
	InitializeResponse = acp.InitializeResponse
	// StopReason is why a turn ended.
	StopReason = acp.StopReason
	// ContentBlock is one block of a prompt.
	ContentBlock = acp.ContentBlock
	// Error is the agent's error answer: a JSON-RPC code, a message and
	// data.kind (a zot error code such as busy or unknown_session).
	Error = jsonrpc.Error
	// RefusedError is the daemon's refusal of the connection: a missing
	// or wrong token (HTTP 401), an Origin not allowed (403), too many
	// connections (429).
	RefusedError = acpdial.RefusedError
)

// Options configure a Client.
type Options struct {
	// Token is the bearer token for a URL (Dial); "" means $ZOT_TOKEN.
	Token string
	// Command is the agent to start for Spawn: default {"zot", "acp"},
	// or $ZOT_BIN's binary with "acp".
	Command []string
	// Env and Dir are the started agent's environment (default: this
	// process's) and working directory.
	Env []string
	Dir string
	// Stderr gets the started agent's stderr (default: discarded).
	Stderr io.Writer

	// OnUpdate gets every session/update, in the order the agent sent
	// them, on the connection's reader: it must not block for long.
	OnUpdate func(Update)
	// Output, when set, gets the text of the agent's answers (the text
	// of its agent_message_chunk updates) as it streams, after OnUpdate
	// has seen each update. Its write errors are ignored.
	Output io.Writer
	// OnPermission answers a permission question with the id of one of
	// its options ("allow_once", "reject_once", …), or "" to cancel it.
	// Without it every question is cancelled (the tool call does not
	// run).
	OnPermission func(ctx context.Context, req PermissionRequest) string
	// Reconnect tunes how a dropped WebSocket connection is made again
	// (its zero value: 10 tries, 0.1 s to 2 s apart).
	Reconnect acpdial.RedialOptions
	// ClientName is the clientInfo name sent with initialize (default
	// "zot-acpclient").
	ClientName string
}

// Client is one connection to an ACP agent. Its methods are safe for
// concurrent use.
type Client struct {
	conn *jsonrpc.Conn
	o    Options
	info InitializeResponse
	proc *exec.Cmd // Spawn's agent, or nil
	once sync.Once
	err  error
}

// Dial connects to a daemon's WebSocket endpoint (ws:// or wss://; the
// path defaults to /acp) with o.Token and makes the handshake. A refused
// token is a *RefusedError.
func Dial(ctx context.Context, url string, o Options) (*Client, error) {
	if o.Token == "" {
		o.Token = os.Getenv("ZOT_TOKEN")
	}
	t, err := acpdial.NewRedial(ctx, func(ctx context.Context) (jsonrpc.Transport, error) {
		return acpdial.Dial(ctx, url, acpdial.Options{Token: o.Token})
	}, o.Reconnect)
	if err != nil {
		return nil, err
	}
	return start(ctx, t, nil, o)
}

// Spawn starts the agent (`zot acp` unless o.Command says otherwise),
// speaks ACP on its stdin and stdout, and makes the handshake.
func Spawn(ctx context.Context, o Options) (*Client, error) {
	argv := o.Command
	if len(argv) == 0 {
		bin := os.Getenv("ZOT_BIN")
		if bin == "" {
			bin = "zot"
		}
		argv = []string{bin, "acp"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stderr = o.Env, o.Dir, o.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	return start(ctx, jsonrpc.NDJSON(pipes{stdout, stdin}, acpdial.MaxMessage), cmd, o)
}

// pipes is a child's stdout and stdin as one stream.
type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close ends the child's input (its signal to finish) and our reading.
func (p pipes) Close() error {
	err := p.w.Close()
	_ = p.ReadCloser.Close()
	return err
}

func start(ctx context.Context, t jsonrpc.Transport, proc *exec.Cmd, o Options) (*Client, error) {
	c := &Client{o: o, proc: proc}
	c.conn = jsonrpc.NewConn(t, jsonrpc.Peer{Transport: "acp", Label: "agent"}, jsonrpc.Static(jsonrpc.HandlerFunc(c.handle)), jsonrpc.Options{})
	name := o.ClientName
	if name == "" {
		name = "zot-acpclient"
	}
	req := acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionLatest,
		ClientCapabilities: &acp.ClientCapabilities{},
		ClientInfo:         &acp.Implementation{Name: name, Version: "1"},
	}
	if err := c.Call(ctx, acp.MethodInitialize, req, &c.info); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// AllowOnce is an OnPermission that allows every tool call once: it
// picks the question's allow_once option ("" when it has none, which
// cancels the question).
func AllowOnce(_ context.Context, req PermissionRequest) string {
	for _, o := range req.Options {
		if o.Kind == acp.PermissionOptionKindAllowOnce {
			return string(o.OptionID)
		}
	}
	return ""
}

// Info is the agent's answer to initialize.
func (c *Client) Info() InitializeResponse { return c.info }

// handle serves what the agent asks of the client.
func (c *Client) handle(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
	switch req.Method {
	case acp.MethodSessionUpdate:
		var n Update
		if (c.o.OnUpdate != nil || c.o.Output != nil) && json.Unmarshal(req.Params, &n) == nil {
			if c.o.OnUpdate != nil {
				c.o.OnUpdate(n)
			}
			if chunk := n.Update.AgentMessageChunk; c.o.Output != nil && chunk != nil && chunk.Content.Text != nil {
				_, _ = io.WriteString(c.o.Output, chunk.Content.Text.Text)
			}
		}
		return jsonrpc.Result(nil)
	case acp.MethodSessionRequestPermission:
		var p PermissionRequest
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return jsonrpc.Fail(jsonrpc.InvalidParams("", "%v", err))
		}
		return jsonrpc.Async(func(ctx context.Context) (any, error) {
			id := ""
			if c.o.OnPermission != nil {
				id = c.o.OnPermission(ctx, p)
			}
			if id == "" || ctx.Err() != nil {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &struct{}{}}}, nil
			}
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
				Selected: &acp.SelectedPermissionOutcome{OptionID: acp.PermissionOptionId(id)},
			}}, nil
		})
	}
	if !req.IsNotification() {
		return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
	}
	return jsonrpc.Result(nil)
}

// Call makes any request of the agent (zot's _zot/ methods among them)
// and decodes its answer into out, when out is not nil.
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	raw, err := c.conn.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decoding the answer: %w", method, err)
	}
	return nil
}

// NewSession opens a new session whose tools work in cwd (an absolute
// path on the agent's machine) and returns its id.
func (c *Client) NewSession(ctx context.Context, cwd string) (string, error) {
	var res acp.NewSessionResponse
	err := c.Call(ctx, acp.MethodSessionNew, acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}}, &res)
	return string(res.SessionID), err
}

// LoadSession opens a stored session: its history is replayed through
// OnUpdate before LoadSession returns. While a turn of it runs the daemon
// answers busy; ResumeSession joins it then.
func (c *Client) LoadSession(ctx context.Context, id, cwd string) error {
	return c.Call(ctx, acp.MethodSessionLoad, acp.LoadSessionRequest{SessionID: acp.SessionId(id), CWD: cwd, MCPServers: []acp.McpServer{}}, nil)
}

// ResumeSession opens a session without replaying it: the updates of a
// turn under way reach OnUpdate from now on.
func (c *Client) ResumeSession(ctx context.Context, id, cwd string) error {
	return c.Call(ctx, acp.MethodSessionResume, acp.ResumeSessionRequest{SessionID: acp.SessionId(id), CWD: cwd}, nil)
}

// PromptResult is how a turn ended.
type PromptResult struct {
	// StopReason is end_turn, cancelled, max_tokens, …; "" when
	// Reconnected.
	StopReason StopReason
	// Reconnected is set when the connection dropped during the turn:
	// the session was resumed on a new one, the turn's later updates came
	// there, and it has ended; its answer went to the lost connection.
	Reconnected bool
	// Meta is the answer's _meta (zot's record of the turn in
	// Meta["zot"]["result"]).
	Meta map[string]any
}

// Prompt sends text to the session and returns when the turn has ended;
// its updates reach OnUpdate meanwhile.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) (PromptResult, error) {
	return c.PromptBlocks(ctx, sessionID, []ContentBlock{{Text: &acp.TextContent{Text: text}}})
}

// PromptBlocks is Prompt with content blocks of any kind.
func (c *Client) PromptBlocks(ctx context.Context, sessionID string, blocks []ContentBlock) (PromptResult, error) {
	var res acp.PromptResponse
	err := c.Call(ctx, acp.MethodSessionPrompt, acp.PromptRequest{SessionID: acp.SessionId(sessionID), Prompt: blocks}, &res)
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Kind == acpdial.KindReconnected {
		return PromptResult{Reconnected: true}, nil
	}
	if err != nil {
		return PromptResult{}, err
	}
	return PromptResult{StopReason: res.StopReason, Meta: res.Meta}, nil
}

// Cancel asks the agent to end the session's running turn: its Prompt
// returns with stop reason cancelled.
func (c *Client) Cancel(ctx context.Context, sessionID string) error {
	return c.conn.Notify(ctx, acp.MethodSessionCancel, acp.CancelNotification{SessionID: acp.SessionId(sessionID)})
}

// Done is closed when the connection has ended for good (Close, the
// agent's exit, or a drop that could not be dialed again).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Close ends the connection (a spawned agent is told by the end of its
// input, and waited for: killed after 5 s).
func (c *Client) Close() error {
	c.once.Do(func() {
		c.err = c.conn.Close()
		if werr := c.conn.Wait(); c.err == nil && werr != nil && !errors.Is(werr, context.Canceled) && !errors.Is(werr, jsonrpc.ErrClosed) {
			c.err = werr
		}
		if c.proc != nil {
			done := make(chan struct{})
			go func() {
				_ = c.proc.Wait()
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = c.proc.Process.Kill()
				<-done
			}
		}
	})
	return c.err
}
