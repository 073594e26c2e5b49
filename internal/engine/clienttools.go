package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Client tools are tools a client of the session runs itself (an
// embedder's function, a program on the other side of zot rpc or ACP).
// The client registers them under its own name; they join the session's
// tool set as one more source ("client:<name>"), so they share its one
// namespace (a name another tool holds is refused with name_taken), go
// through the same interceptors and approval (unless registered read
// only) and are bounded by a timeout and ended by an abort as extension
// tools are. A call reaches the client through the runner it registered
// with, or, without one, as a client_tool_call event delivered into the
// running work, answered by AnswerClientTool. DropClientTools fails the
// pending calls of a client that went away at once.

// ClientTool is the definition of a tool a client runs.
type ClientTool struct {
	// Name is what the model calls it: letters, digits, _ and -.
	Name string
	// Description tells the model what it does.
	Description string
	// Schema is the JSON Schema of its arguments; empty means any object.
	Schema json.RawMessage
	// ReadOnly says it changes nothing: it runs in read-only mode and is
	// never put through approval.
	ReadOnly bool
	// Timeout bounds one call; 0 means exthost.DefaultToolTimeout.
	Timeout time.Duration
}

// ClientToolCall is one call of a client tool, as its runner gets it.
type ClientToolCall struct {
	// ID is the model's id of the call.
	ID string
	// Tool is the tool's name.
	Tool string
	// Args is the JSON object of its arguments.
	Args json.RawMessage
	// Timeout is how long zot waits for the result.
	Timeout time.Duration
}

// ClientToolRunner runs a call of a client tool and returns its result;
// it returns once ctx ends (an abort, the timeout). A failure the model
// should see is a Result with IsError; an error return is shown to the
// model too, as the tool having failed.
type ClientToolRunner func(ctx context.Context, call ClientToolCall) (tools.Result, error)

// ErrNoClientToolCall is the error of an answer to a client tool call
// that does not wait for one: never made, answered, timed out or aborted.
var ErrNoClientToolCall = wire.Sentinel(wire.CodeNotFound, "no client tool call of that id waits for its result")

// NameTakenError is the error of a client tool whose name another tool
// of the session holds.
type NameTakenError struct {
	Name  string // the tool's name
	Owner string // who holds it: "built-in", "extension x", "client y"...
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("tool name %q is taken: %s offers a tool of that name", e.Name, e.Owner)
}

// ErrorCode implements wire.Coded: name_taken.
func (e *NameTakenError) ErrorCode() wire.ErrorCode { return wire.CodeNameTaken }

// clientToolSource is the tool set source of a client's tools.
func clientToolSource(client string) string { return "client:" + client }

// validToolName reports whether name may be a client tool's: 1 to 64
// ASCII letters, digits, _ or -. (A regexp of it, compiled at every
// start, was the largest allocation of the package inits: 60 KB that
// stayed live in every process.)
func validToolName(name string) bool {
	if len(name) < 1 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// clientToolState is a session's client tools and their pending calls.
type clientToolState struct {
	mu      sync.Mutex
	clients map[string]*toolClient
	pending map[string]*clientCall // by call id, the calls waiting for AnswerClientTool
}

// toolClient is one client's registration.
type toolClient struct {
	name  string
	run   ClientToolRunner // nil: by event and AnswerClientTool
	tools map[string]*clientTool
	gone  chan struct{} // closed by DropClientTools
	why   string        // why it went, set before gone is closed
}

// clientCall is a call waiting for its answer.
type clientCall struct {
	client *toolClient
	ch     chan tools.Result // buffered: the answer never blocks
}

// clientTool is a client tool in the session's tool set.
type clientTool struct {
	s      *Session
	client *toolClient
	def    ClientTool
	schema json.RawMessage
}

func (t *clientTool) Name() string            { return t.def.Name }
func (t *clientTool) Description() string     { return t.def.Description }
func (t *clientTool) Schema() json.RawMessage { return t.schema }

// ReadOnly implements tools.ReadOnly.
func (t *clientTool) ReadOnly() bool { return t.def.ReadOnly }

// Run asks the client and waits for its result, at most the tool's
// timeout, until the work is aborted, or until the client goes away.
func (t *clientTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	timeout := t.def.Timeout
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errClientToolTimeout)
	defer cancel()
	c := t.client
	req := ClientToolCall{ID: call.ID, Tool: t.def.Name, Args: args, Timeout: timeout}
	var (
		res tools.Result
		err error
	)
	if c.run != nil {
		res, err = t.runDirect(cctx, req)
	} else {
		res, err = t.s.clientTools.byEvent(cctx, c, req)
	}
	switch {
	case err == nil:
		if len(res.Content) == 0 {
			res = tools.Result{Content: tools.Text("(the client returned no content)").Content, IsError: res.IsError}
		}
		return res, nil
	case ctx.Err() != nil:
		return tools.Errorf("aborted"), nil
	case errors.Is(context.Cause(cctx), errClientToolTimeout):
		return tools.Errorf(fmt.Sprintf("the client gave no result for %s within %s", t.def.Name, timeout)), nil
	default:
		return tools.Errorf(fmt.Sprintf("the client failed to run %s: %v", t.def.Name, err)), nil
	}
}

// errClientToolTimeout is the cause of a call past its timeout.
var errClientToolTimeout = errors.New("client tool timeout")

// runDirect calls the client's runner, giving up when the client goes.
func (t *clientTool) runDirect(ctx context.Context, req ClientToolCall) (tools.Result, error) {
	c := t.client
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	select {
	case <-c.gone:
		return tools.Result{}, errors.New(c.why)
	default:
	}
	type out struct {
		res tools.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := c.run(ctx, req)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-c.gone:
		cancel()
		<-done // the runner returns once ctx ends
		return tools.Result{}, errors.New(c.why)
	}
}

// byEvent delivers the call as a client_tool_call event into the
// running work and waits for AnswerClientTool. The call waits in the
// table from before its event is delivered, so no answer is early.
func (st *clientToolState) byEvent(ctx context.Context, c *toolClient, req ClientToolCall) (tools.Result, error) {
	ch := make(chan tools.Result, 1)
	st.mu.Lock()
	if _, dup := st.pending[req.ID]; dup {
		st.mu.Unlock()
		return tools.Result{}, fmt.Errorf("a call with id %q already waits for its result", req.ID)
	}
	if st.pending == nil {
		st.pending = make(map[string]*clientCall)
	}
	st.pending[req.ID] = &clientCall{client: c, ch: ch}
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.pending, req.ID)
		st.mu.Unlock()
	}()
	select {
	case <-c.gone:
		return tools.Result{}, errors.New(c.why)
	default:
	}
	emitInto(ctx, &wire.ClientToolCallEvent{CallID: req.ID, Tool: req.Tool, Args: req.Args, TimeoutMs: max(req.Timeout.Milliseconds(), 1)})
	select {
	case res := <-ch:
		return res, nil
	case <-c.gone:
		return tools.Result{}, errors.New(c.why)
	case <-ctx.Done():
		return tools.Result{}, context.Cause(ctx)
	}
}

// RegisterClientTools adds list to the tools of client (replacing those
// of the same names it registered before) and returns the names it has
// now, sorted. run, when set, runs its calls; nil sends them as
// client_tool_call events to be answered with AnswerClientTool (the
// runner given first for a client stays its runner). All or nothing: a
// bad definition fails with invalid_params, a name another tool of the
// session holds with a *NameTakenError.
func (s *Session) RegisterClientTools(client string, list []ClientTool, run ClientToolRunner) ([]string, error) {
	seen := make(map[string]bool, len(list))
	for i, d := range list {
		if !validToolName(d.Name) {
			return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("tools[%d]: name %q: want 1 to 64 letters, digits, _ or -", i, d.Name)}
		}
		if seen[d.Name] {
			return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("tools[%d]: %q is named twice", i, d.Name)}
		}
		seen[d.Name] = true
		if len(d.Schema) > 0 {
			var obj map[string]any
			if err := json.Unmarshal(d.Schema, &obj); err != nil {
				return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("tools[%d]: schema: want a JSON object", i)}
			}
		}
	}
	st := &s.clientTools
	st.mu.Lock()
	defer st.mu.Unlock()
	src := clientToolSource(client)
	for _, d := range list {
		if owner := s.toolOwner(d.Name, src); owner != "" {
			return nil, &NameTakenError{Name: d.Name, Owner: owner}
		}
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if st.clients == nil {
		st.clients = make(map[string]*toolClient)
	}
	c := st.clients[client]
	if c == nil {
		c = &toolClient{name: client, run: run, tools: make(map[string]*clientTool), gone: make(chan struct{})}
		st.clients[client] = c
	}
	for _, d := range list {
		if d.Timeout <= 0 {
			d.Timeout = exthost.DefaultToolTimeout
		}
		schema := d.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		c.tools[d.Name] = &clientTool{s: s, client: c, def: d, schema: schema}
	}
	s.setClientTools(c)
	return c.names(), nil
}

// UnregisterClientTools removes tools of client by name (none named: all
// of them) and returns the names it has left. A name the client did not
// register fails with not_found, removing nothing. Calls under way still
// wait for their results.
func (s *Session) UnregisterClientTools(client string, names []string) ([]string, error) {
	st := &s.clientTools
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.clients[client]
	for _, n := range names {
		if c == nil || c.tools[n] == nil {
			return nil, &wire.Error{Code: wire.CodeNotFound, Message: fmt.Sprintf("no client tool %q is registered", n)}
		}
	}
	if c == nil {
		return []string{}, nil
	}
	if names == nil {
		clear(c.tools)
	}
	for _, n := range names {
		delete(c.tools, n)
	}
	s.setClientTools(c)
	return c.names(), nil
}

// AnswerClientTool delivers the result of the client_tool_call callID.
// It fails with ErrNoClientToolCall (not_found) when no call of that id
// waits.
func (s *Session) AnswerClientTool(callID string, res tools.Result) error {
	st := &s.clientTools
	st.mu.Lock()
	p := st.pending[callID]
	delete(st.pending, callID)
	st.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%w: %q", ErrNoClientToolCall, callID)
	}
	p.ch <- res
	return nil
}

// DropClientTools removes every tool of client and fails its calls under
// way at once with why (the client disconnected). The client may
// register again afterwards, as a new one.
func (s *Session) DropClientTools(client, why string) {
	st := &s.clientTools
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.clients[client]
	if c == nil {
		return
	}
	delete(st.clients, client)
	c.why = why
	close(c.gone)
	clear(c.tools)
	s.setClientTools(c)
}

// dropAllClientTools drops every client, as the session closes.
func (s *Session) dropAllClientTools() {
	st := &s.clientTools
	st.mu.Lock()
	names := make([]string, 0, len(st.clients))
	for n := range st.clients {
		names = append(names, n)
	}
	st.mu.Unlock()
	for _, n := range names {
		s.DropClientTools(n, "the session closed")
	}
}

// setClientTools puts c's tools into the tool set. The caller holds
// st.mu.
func (s *Session) setClientTools(c *toolClient) {
	src := clientToolSource(c.name)
	if len(c.tools) == 0 {
		s.Tools().Remove(src)
		return
	}
	list := make([]tools.Tool, 0, len(c.tools))
	for _, n := range c.names() {
		list = append(list, c.tools[n])
	}
	s.Tools().Set(src, list)
}

// toolOwner says who, other than source, offers a tool named name now,
// or "" when nobody does.
func (s *Session) toolOwner(name, source string) string {
	switch src := s.Tools().View().Source(name); {
	case src == "" || src == source:
		return ""
	case src == agent.BuiltinSource:
		return "zot (a built-in tool)"
	case strings.HasPrefix(src, "client:"):
		return "another client (" + strings.TrimPrefix(src, "client:") + ")"
	case strings.HasPrefix(src, "ext:"):
		return "extension " + strings.TrimPrefix(src, "ext:")
	default:
		return src
	}
}

// names lists the client's tools, sorted.
func (c *toolClient) names() []string {
	out := make([]string, 0, len(c.tools))
	for n := range c.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
