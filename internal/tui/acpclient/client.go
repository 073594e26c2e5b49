// Package acpclient is the terminal client's side of the Agent Client
// Protocol: a jsonrpc connection to an ACP agent (zot's acpserver in the
// same process over jsonrpc.NewPipe, or a daemon's socket), the calls the
// terminal makes, and what the agent sends it turned into [Event]s.
//
// It imports only the generated ACP types and the JSON-RPC plumbing,
// never the engine: whatever the terminal shows reached it over the wire.
package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
)

// Event is what the agent sent the client: one of [Text], [Update],
// [ConfigUpdate], [Permission], [Notice], [PanelOpened], [PanelRendered],
// [PanelClosed].
type Event interface{ event() }

// Update is one session/update the generated types hold.
type Update struct {
	SessionID string
	Update    acp.SessionUpdate
}

// ConfigUpdate is a config_option_update: every option of the session.
type ConfigUpdate struct {
	SessionID string
	Options   []ConfigOption
}

// Permission is a session/request_permission: the agent waits until
// Answer is called (once; later calls do nothing) with an option's id,
// or with "" for cancelled.
type Permission struct {
	Request acp.RequestPermissionRequest
	Answer  func(optionID string)
}

// Notice is a _zot/notify: an extension's notify, an MCP server's or
// zot's notice.
type Notice struct{ acp.ZotNotifyNotification }

// PanelOpened is a _zot/panel/opened.
type PanelOpened struct{ acp.ZotPanelOpenedNotification }

// PanelRendered is a _zot/panel/rendered.
type PanelRendered struct {
	acp.ZotPanelRenderedNotification
}

// PanelClosed is a _zot/panel/closed.
type PanelClosed struct{ acp.ZotPanelClosedNotification }

func (Update) event()        {}
func (ConfigUpdate) event()  {}
func (Permission) event()    {}
func (Notice) event()        {}
func (PanelOpened) event()   {}
func (PanelRendered) event() {}
func (PanelClosed) event()   {}

// ConfigOption is one select of a session's config options (the model,
// the thinking level), decoded from ACP's select shape.
type ConfigOption struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Category     string         `json:"category,omitempty"`
	CurrentValue string         `json:"currentValue"`
	Options      []ConfigChoice `json:"options"`
}

// ConfigChoice is one value of a ConfigOption.
type ConfigChoice struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Session is what session/new and session/load answer.
type Session struct {
	ID      string
	Modes   *acp.SessionModeState
	Options []ConfigOption
}

// Client is one connection to an ACP agent. Its methods are safe for
// concurrent use.
type Client struct {
	conn    *jsonrpc.Conn
	deliver func(Event)

	mu      sync.Mutex
	pending map[*Permission]chan string // requests not answered yet
	closed  bool
}

// New connects over t. deliver gets every event, in the order the agent
// sent them, on the connection's reader goroutine: it must hand them on
// without blocking for long.
func New(t jsonrpc.Transport, deliver func(Event)) *Client {
	c := &Client{deliver: deliver, pending: map[*Permission]chan string{}}
	// The text chunks of an answer are decoded as they are read.
	t = &textTransport{Transport: t, deliver: deliver}
	c.conn = jsonrpc.NewConn(t, jsonrpc.Peer{Transport: "acp", Label: "agent"}, jsonrpc.Static(jsonrpc.HandlerFunc(c.handle)), jsonrpc.Options{})
	return c
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Err is why the connection ended, once it has.
func (c *Client) Err() error { return c.conn.Err() }

// Close ends the connection and waits for its goroutines; a permission
// request still waiting is answered cancelled.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.conn.Close()
	if werr := c.conn.Wait(); err == nil && werr != nil && !errors.Is(werr, context.Canceled) {
		err = werr
	}
	return err
}

// handle serves what the agent asks of the client.
func (c *Client) handle(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
	switch req.Method {
	case acp.MethodSessionUpdate:
		c.update(req.Params)
		return jsonrpc.Result(nil)
	case acp.MethodSessionRequestPermission:
		var p acp.RequestPermissionRequest
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return jsonrpc.Fail(jsonrpc.InvalidParams("", "%v", err))
		}
		return c.ask(p)
	case acp.MethodZotNotify:
		var n acp.ZotNotifyNotification
		if json.Unmarshal(req.Params, &n) == nil {
			c.deliver(Notice{n})
		}
	case acp.MethodZotPanelOpened:
		var n acp.ZotPanelOpenedNotification
		if json.Unmarshal(req.Params, &n) == nil {
			c.deliver(PanelOpened{n})
		}
	case acp.MethodZotPanelRendered:
		var n acp.ZotPanelRenderedNotification
		if json.Unmarshal(req.Params, &n) == nil {
			c.deliver(PanelRendered{n})
		}
	case acp.MethodZotPanelClosed:
		var n acp.ZotPanelClosedNotification
		if json.Unmarshal(req.Params, &n) == nil {
			c.deliver(PanelClosed{n})
		}
	default:
		if !req.IsNotification() {
			return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
		}
	}
	return jsonrpc.Result(nil)
}

// update decodes a session/update. A config_option_update is decoded
// into ConfigOptions (ACP's select choices are a union the generated
// types keep as JSON); an update the generated types do not know is
// skipped, as ACP says a client does.
func (c *Client) update(params json.RawMessage) {
	var head struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			Kind          string         `json:"sessionUpdate"`
			ConfigOptions []ConfigOption `json:"configOptions"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &head) != nil {
		return
	}
	if head.Update.Kind == "config_option_update" {
		c.deliver(ConfigUpdate{SessionID: head.SessionID, Options: head.Update.ConfigOptions})
		return
	}
	var n acp.SessionNotification
	if json.Unmarshal(params, &n) != nil {
		return
	}
	c.deliver(Update{SessionID: string(n.SessionID), Update: n.Update})
}

// ask hands a permission request to the terminal and answers once the
// person chose (or the request was cancelled).
func (c *Client) ask(p acp.RequestPermissionRequest) jsonrpc.Reply {
	ch := make(chan string, 1)
	var once sync.Once
	perm := &Permission{Request: p}
	perm.Answer = func(id string) { once.Do(func() { ch <- id }) }
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return jsonrpc.Result(cancelled())
	}
	c.pending[perm] = ch
	c.mu.Unlock()
	c.deliver(*perm)
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		defer func() {
			c.mu.Lock()
			delete(c.pending, perm)
			c.mu.Unlock()
		}()
		select {
		case id := <-ch:
			if id == "" {
				return cancelled(), nil
			}
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
				Selected: &acp.SelectedPermissionOutcome{OptionID: acp.PermissionOptionId(id)},
			}}, nil
		case <-ctx.Done():
			return cancelled(), nil
		}
	})
}

func cancelled() acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &struct{}{}}}
}

// call makes a request and decodes its answer into out (when not nil).
func (c *Client) call(ctx context.Context, method string, params, out any) error {
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

// Initialize makes the handshake. The client offers no file system and
// no terminal: the agent's own tools act on its machine.
func (c *Client) Initialize(ctx context.Context, version string) (acp.InitializeResponse, error) {
	req := acp.InitializeRequest{
		ProtocolVersion:    acp.ProtocolVersionLatest,
		ClientCapabilities: &acp.ClientCapabilities{},
		ClientInfo:         &acp.Implementation{Name: "zot-terminal", Version: version},
	}
	var res acp.InitializeResponse
	err := c.call(ctx, acp.MethodInitialize, req, &res)
	return res, err
}

// sessionAnswer is what session/new and session/load answer, with the
// config options in their select shape.
type sessionAnswer struct {
	SessionID     string                `json:"sessionId"`
	Modes         *acp.SessionModeState `json:"modes"`
	ConfigOptions []ConfigOption        `json:"configOptions"`
}

// NewSession opens a new session in cwd.
func (c *Client) NewSession(ctx context.Context, cwd string) (Session, error) {
	var res sessionAnswer
	err := c.call(ctx, acp.MethodSessionNew, acp.NewSessionRequest{CWD: cwd}, &res)
	return Session{ID: res.SessionID, Modes: res.Modes, Options: res.ConfigOptions}, err
}

// LoadSession opens a stored session; the agent replays its history as
// updates before it answers.
func (c *Client) LoadSession(ctx context.Context, id, cwd string) (Session, error) {
	var res sessionAnswer
	err := c.call(ctx, acp.MethodSessionLoad, acp.LoadSessionRequest{SessionID: acp.SessionId(id), CWD: cwd}, &res)
	if res.SessionID == "" {
		res.SessionID = id
	}
	return Session{ID: res.SessionID, Modes: res.Modes, Options: res.ConfigOptions}, err
}

// ListSessions lists the agent's sessions, of cwd only when it is not
// empty, newest first as the agent orders them.
func (c *Client) ListSessions(ctx context.Context, cwd string) ([]acp.SessionInfo, error) {
	var all []acp.SessionInfo
	req := acp.ListSessionsRequest{}
	if cwd != "" {
		req.CWD = &cwd
	}
	for range 100 { // pages; a bound against an agent that never ends its list
		var res acp.ListSessionsResponse
		if err := c.call(ctx, acp.MethodSessionList, req, &res); err != nil {
			return all, err
		}
		all = append(all, res.Sessions...)
		if res.NextCursor == nil || *res.NextCursor == "" {
			break
		}
		req.Cursor = res.NextCursor
	}
	return all, nil
}

// Prompt sends text as a prompt and waits for the turn's end; the
// turn's updates arrive as events before it returns.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) (acp.StopReason, error) {
	req := acp.PromptRequest{SessionID: acp.SessionId(sessionID), Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}
	var res acp.PromptResponse
	err := c.call(ctx, acp.MethodSessionPrompt, req, &res)
	return res.StopReason, err
}

// Cancel asks the agent to end the session's running turn.
func (c *Client) Cancel(ctx context.Context, sessionID string) error {
	return c.conn.Notify(ctx, acp.MethodSessionCancel, acp.CancelNotification{SessionID: acp.SessionId(sessionID)})
}

// SetMode changes the session's permission mode.
func (c *Client) SetMode(ctx context.Context, sessionID, mode string) error {
	return c.call(ctx, acp.MethodSessionSetMode, acp.SetSessionModeRequest{SessionID: acp.SessionId(sessionID), ModeID: acp.SessionModeId(mode)}, nil)
}

// SetConfigOption sets one config option (the model: "model") and
// returns every option as they now are.
func (c *Client) SetConfigOption(ctx context.Context, sessionID, id, value string) ([]ConfigOption, error) {
	req := map[string]string{"sessionId": sessionID, "configId": id, "value": value}
	var res struct {
		ConfigOptions []ConfigOption `json:"configOptions"`
	}
	err := c.call(ctx, acp.MethodSessionSetConfigOption, req, &res)
	return res.ConfigOptions, err
}

// PanelKey sends a key to an open panel; text holds the character of a
// "rune" key.
func (c *Client) PanelKey(ctx context.Context, sessionID, panelID string, key acp.PanelKey, text string) error {
	req := acp.ZotPanelKeyRequest{SessionID: sessionID, PanelID: panelID, Key: key}
	if text != "" {
		req.Text = &text
	}
	return c.call(ctx, acp.MethodZotPanelKey, req, nil)
}

// Steer adds text to the session's running turn at its next step
// boundary (_zot/session/steer).
func (c *Client) Steer(ctx context.Context, sessionID, text string) error {
	return c.call(ctx, acp.MethodZotSessionSteer, acp.SessionSteerRequest{SessionID: sessionID, Message: text}, nil)
}

// PanelClose closes an open panel.
func (c *Client) PanelClose(ctx context.Context, sessionID, panelID string) error {
	return c.call(ctx, acp.MethodZotPanelClose, acp.ZotPanelCloseRequest{SessionID: sessionID, PanelID: panelID}, nil)
}
