package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"zot.dev/zot/internal/telemetry"
)

// LatestVersion is the protocol revision the client asks for in
// initialize: https://modelcontextprotocol.io/specification/2025-11-25.
const LatestVersion = "2025-11-25"

// Versions are the protocol revisions the client speaks, newest first: a
// server may answer initialize with any of them (lifecycle, "Version
// Negotiation": the server answers the version asked for, or another it
// supports, and the client disconnects when it does not support that
// one).
var Versions = [...]string{LatestVersion, "2025-06-18", "2025-03-26", "2024-11-05"}

// ErrConnectionClosed is the error of a call when the connection ended
// before its answer came, and of every call after it ended.
var ErrConnectionClosed = errors.New("the connection to the MCP server is closed")

// Conn is a transport's connection: it reads and writes whole messages.
// Read is called by one goroutine; Write may be called by several at
// once. Close ends the connection, and makes a Read under way return.
type Conn interface {
	Read(ctx context.Context) (*Message, error)
	Write(ctx context.Context, m *Message) error
	Close() error
}

// versioned is a Conn that must know the negotiated protocol version (the
// streamable HTTP transport sends it in a header).
type versioned interface {
	setProtocolVersion(v string)
}

// Options configure a Session.
type Options struct {
	// Client names the client in initialize.
	Client Implementation
	// OnToolsChanged is called, from the reading goroutine, when the
	// server says its tools changed (notifications/tools/list_changed).
	OnToolsChanged func()
	// OnProgress is called, from the reading goroutine, with each
	// notifications/progress.
	OnProgress func(ProgressParams)
}

// Session is an initialized connection to an MCP server. Its one reading
// goroutine runs until the connection ends; Wait waits for it.
type Session struct {
	conn Conn
	opts Options
	init InitializeResult

	// life ends when the session is closed: a Read under way and the
	// answers to the server's requests give up.
	life context.Context
	end  context.CancelFunc

	mu      sync.Mutex
	next    int64
	pending map[string]chan *Message
	err     error // why the connection ended, once done is closed

	done      chan struct{}
	closeOnce sync.Once
}

// Connect starts the session over conn: it sends initialize, checks the
// protocol version the server answered and sends
// notifications/initialized. On failure conn is closed. ctx bounds the
// handshake only.
func Connect(ctx context.Context, conn Conn, opts Options) (*Session, error) {
	s := &Session{conn: conn, opts: opts, pending: map[string]chan *Message{}, done: make(chan struct{})}
	s.life, s.end = context.WithCancel(context.Background())
	go s.readLoop()
	params := map[string]any{
		"protocolVersion": LatestVersion,
		// No roots, sampling or elicitation: zot offers the server
		// nothing to ask for.
		"capabilities": map[string]any{},
		"clientInfo":   opts.Client,
	}
	if err := s.call(ctx, "initialize", params, &s.init); err != nil {
		s.Close()
		return nil, err
	}
	if !slices.Contains(Versions[:], s.init.ProtocolVersion) {
		s.Close()
		return nil, fmt.Errorf("the server answered initialize with protocol version %q, which zot does not speak (it speaks %v)", s.init.ProtocolVersion, Versions)
	}
	if v, ok := conn.(versioned); ok {
		v.setProtocolVersion(s.init.ProtocolVersion)
	}
	if err := s.notify(ctx, "notifications/initialized", nil); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// InitializeResult returns the server's answer to initialize.
func (s *Session) InitializeResult() *InitializeResult { return &s.init }

// Wait waits for the connection to end and returns why it ended
// (io.EOF when the server's output ended).
func (s *Session) Wait() error {
	<-s.done
	return s.err
}

// Close ends the connection and waits for the reading goroutine.
func (s *Session) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.end()
		err = s.conn.Close()
	})
	<-s.done
	return err
}

// ListTools fetches every page of the server's tools.
func (s *Session) ListTools(ctx context.Context) ([]*Tool, error) {
	var out []*Tool
	seen := map[string]bool{}
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools      []*Tool `json:"tools"`
			NextCursor string  `json:"nextCursor,omitempty"`
		}
		if err := s.call(ctx, "tools/list", params, &page); err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			if t != nil && t.Name != "" {
				out = append(out, t)
			}
		}
		if page.NextCursor == "" {
			return out, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("tools/list gave the cursor %q twice", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// CallTool calls the tool name with args (a JSON object). A progress
// token, when not empty, asks the server for notifications/progress. When
// ctx ends first, the server is told with notifications/cancelled.
//
// With telemetry on, the call is a span of its own (MCP's "tools/call
// {tool}", a client span) whose trace context goes to the server in
// _meta.traceparent, as MCP documents it, so a server that traces
// continues zot's trace.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage, progressToken string) (*CallToolResult, error) {
	params := map[string]any{"name": name, "arguments": args}
	meta := map[string]any{}
	if progressToken != "" {
		meta["progressToken"] = progressToken
	}
	ctx, span := telemetry.StartChild(ctx, "tools/call "+name, telemetry.KindClient,
		telemetry.String("mcp.method.name", "tools/call"), telemetry.String("gen_ai.tool.name", name),
		telemetry.String("gen_ai.operation.name", "execute_tool"))
	defer span.End()
	if sc := span.Context(); sc.IsValid() {
		meta["traceparent"] = sc.Traceparent()
		if sc.State != "" {
			meta["tracestate"] = sc.State
		}
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	var res CallToolResult
	if err := s.call(ctx, "tools/call", params, &res); err != nil {
		span.Fail("mcp_error", err.Error())
		return nil, err
	}
	if res.IsError {
		span.Fail("tool_error", "the tool's result is an error")
	}
	return &res, nil
}

// call sends a request and decodes its answer into result.
func (s *Session) call(ctx context.Context, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encoding the params of %s: %w", method, err)
	}
	ch := make(chan *Message, 1)
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return closedErr(err)
	}
	s.next++
	id := s.next
	key := strconv.FormatInt(id, 10)
	s.pending[key] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, key)
		s.mu.Unlock()
	}
	if err := s.conn.Write(ctx, &Message{ID: json.RawMessage(key), Method: method, Params: p}); err != nil {
		forget()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-s.done:
			return closedErr(s.err)
		default:
		}
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("decoding the answer to %s: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		// The server stops the work: lifecycle's cancellation
		// (basic/utilities/cancellation). initialize is never cancelled.
		if method != "initialize" {
			cctx, cancel := context.WithTimeout(s.life, cancelNoteTimeout)
			_ = s.notify(cctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": context.Cause(ctx).Error()})
			cancel()
		}
		return ctx.Err()
	case <-s.done:
		forget()
		return closedErr(s.err)
	}
}

// closedErr is the error of a call on an ended connection.
func closedErr(why error) error {
	if why == nil || errors.Is(why, ErrConnectionClosed) {
		return ErrConnectionClosed
	}
	return fmt.Errorf("%w: %w", ErrConnectionClosed, why)
}

// notify sends a notification.
func (s *Session) notify(ctx context.Context, method string, params any) error {
	m := &Message{Method: method}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encoding the params of %s: %w", method, err)
		}
		m.Params = p
	}
	if err := s.conn.Write(ctx, m); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

// readLoop reads until the connection ends, handing answers to their
// calls and serving the server's notifications and requests.
func (s *Session) readLoop() {
	var err error
	for {
		var m *Message
		m, err = s.conn.Read(s.life)
		if err != nil {
			break
		}
		switch {
		case m.IsResponse():
			s.mu.Lock()
			ch := s.pending[idKey(m.ID)]
			delete(s.pending, idKey(m.ID))
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.IsNotification():
			s.notified(m)
		default:
			s.answer(m)
		}
	}
	if s.life.Err() != nil && (errors.Is(err, context.Canceled) || err == nil) {
		err = ErrConnectionClosed
	}
	if err == nil {
		err = io.EOF
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	close(s.done)
}

// notified serves a notification from the server.
func (s *Session) notified(m *Message) {
	switch m.Method {
	case "notifications/tools/list_changed":
		if s.opts.OnToolsChanged != nil {
			s.opts.OnToolsChanged()
		}
	case "notifications/progress":
		var p ProgressParams
		if s.opts.OnProgress != nil && json.Unmarshal(m.Params, &p) == nil {
			s.opts.OnProgress(p)
		}
	}
}

// answer serves a request from the server: ping is answered (basic/
// utilities/ping); anything else is a method the client does not have,
// since it declared no capabilities.
func (s *Session) answer(m *Message) {
	reply := &Message{ID: m.ID}
	if m.Method == "ping" {
		reply.Result = json.RawMessage(`{}`)
	} else {
		reply.Error = &Error{Code: CodeMethodNotFound, Message: "method not found: " + m.Method}
	}
	ctx, cancel := context.WithTimeout(s.life, cancelNoteTimeout)
	defer cancel()
	_ = s.conn.Write(ctx, reply)
}
