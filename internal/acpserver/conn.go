package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/wire"
)

// conn is the handler of one connection.
type conn struct {
	agent *Agent
	c     *jsonrpc.Conn

	mu          sync.Mutex
	initialized bool
	caps        *acp.ClientCapabilities // what the client offers (initialize)
	open        map[string]*acpSession  // sessions this connection has open
	// sendFailed is set once an update to the client failed (and that
	// was logged): a client gone in the middle of a replay fails every
	// later frame of it the same way.
	sendFailed atomic.Bool
}

// Handle serves one message, on the connection's reader goroutine: quick
// work is answered at once; a prompt or compaction is admitted here (so
// a session/cancel read after it finds it) and answered by an Async job.
func (h *conn) Handle(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
	if req.Method == acp.MethodInitialize {
		return h.initialize(req)
	}
	h.mu.Lock()
	ready := h.initialized
	h.mu.Unlock()
	if !ready {
		return jsonrpc.Fail(appError(acp.ErrorKindNotInitialized, "", "send initialize first; %s is served after it", req.Method))
	}
	switch req.Method {
	case acp.MethodAuthenticate:
		return h.authenticate(req)
	case acp.MethodSessionNew:
		return h.sessionNew(req)
	case acp.MethodSessionLoad:
		return h.sessionLoad(req)
	case acp.MethodSessionResume:
		return h.sessionResume(req)
	case acp.MethodSessionList:
		return h.sessionList(req)
	case acp.MethodSessionClose:
		return h.sessionClose(req)
	case acp.MethodSessionDelete:
		return h.sessionDelete(req)
	case acp.MethodSessionPrompt:
		return h.prompt(req)
	case acp.MethodSessionCancel:
		return h.cancel(req)
	case acp.MethodSessionSetMode:
		return h.setMode(req)
	case acp.MethodSessionSetConfigOption:
		return h.setConfigOption(req)
	case acp.MethodZotStatus, acp.MethodStatus:
		return jsonrpc.Result(h.agent.status(h.mayOwn))
	case acp.MethodZotSessionHistory:
		return h.history(req)
	case acp.MethodZotSessionFork:
		return h.fork(req) // fork.go
	case acp.MethodZotModelsList:
		return h.models(req)
	case acp.MethodZotCapabilities:
		return h.zotCapabilities(req) // capabilities.go
	case acp.MethodZotSessionCompact:
		return h.compact(req)
	case acp.MethodZotSessionUndo:
		return h.undo(req) // undo.go
	case acp.MethodZotSessionConfig:
		return h.sessionConfig(req) // config.go
	case acp.MethodZotSessionSandbox:
		return h.sessionSandbox(req) // sandbox.go
	case acp.MethodZotAgentsList:
		return h.agentsList(req) // skills.go
	case acp.MethodZotSkillsList:
		return h.skillsList(req) // skills.go
	case acp.MethodZotSkillsGet:
		return h.skillsGet(req)
	case acp.MethodZotSessionSteer:
		return h.steer(req) // steer.go
	case acp.MethodZotSessionInjectContext:
		return h.injectContext(req)
	case acp.MethodZotSessionExternalEvent:
		return h.externalEvent(req)
	case acp.MethodZotSessionRegisterTools:
		return h.registerTools(req) // tools.go
	case acp.MethodZotSessionUnregisterTools:
		return h.unregisterTools(req)
	case acp.MethodZotPanelKey:
		return h.panelKey(req) // panels.go
	case acp.MethodZotPanelClose:
		return h.panelClose(req)
	}
	return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
}

// OnClose detaches the connection from its sessions: their running
// turns finish into their files, and a session no connection has open
// any more is closed once idle.
func (h *conn) OnClose(error) {
	h.mu.Lock()
	open := h.open
	h.open = map[string]*acpSession{}
	h.mu.Unlock()
	for _, s := range open {
		// The calls of its tools fail at once: no answer can come.
		s.eng.DropClientTools(h.toolClient(), "the client disconnected")
		s.release(h)
	}
}

// decode reads params into v, strictly enough to name the member at
// fault, and checks that required members are there.
func decode(req *jsonrpc.Request, v any, required ...string) error {
	raw := req.Params
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = []byte("{}")
	}
	var members map[string]acp.RawRef // no copy of a long member
	if err := json.Unmarshal(raw, &members); err != nil {
		return jsonrpc.InvalidParams("params", "must be an object")
	}
	for _, r := range required {
		if m, ok := members[r]; !ok || bytes.Equal(m, []byte("null")) {
			return jsonrpc.InvalidParams(r, "is required")
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return jsonrpc.InvalidParams(te.Field, "must be %s, not %s", te.Type.Kind(), te.Value)
		}
		return jsonrpc.InvalidParams("params", "%v", err)
	}
	return nil
}

// isDate reports whether s has the form YYYY-MM-DD.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// initialize negotiates the version: the agent answers with the version
// the client asked for when it speaks it, else with its own latest; the
// client decides whether to go on.
func (h *conn) initialize(req *jsonrpc.Request) jsonrpc.Reply {
	// protocolVersion is read on its own, to name it in the error: ACP's
	// schema makes it a required integer from 0 to 65535. Some editors
	// (Zed, once) sent a date such as "2024-11-05", which ACP's SDKs take
	// as an old version: it is answered with this agent's version too.
	var p struct {
		ProtocolVersion    json.RawMessage         `json:"protocolVersion"`
		ClientCapabilities *acp.ClientCapabilities `json:"clientCapabilities"`
	}
	if err := decode(req, &p, "protocolVersion"); err != nil {
		return jsonrpc.Fail(err)
	}
	var version uint16
	var date string
	if json.Unmarshal(p.ProtocolVersion, &version) != nil && (json.Unmarshal(p.ProtocolVersion, &date) != nil || !isDate(date)) {
		return jsonrpc.Fail(jsonrpc.InvalidParams("protocolVersion", "must be an integer from 0 to 65535 (ACP's ProtocolVersion), got %s", p.ProtocolVersion))
	}
	h.mu.Lock()
	h.initialized = true
	h.caps = p.ClientCapabilities
	h.mu.Unlock()
	title := "zot"
	res := acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionLatest,
		AgentCapabilities: &acp.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: &acp.PromptCapabilities{Image: true, EmbeddedContext: true},
			MCPCapabilities:    &acp.McpCapabilities{HTTP: true, SSE: true},
			SessionCapabilities: &acp.SessionCapabilities{
				List:   &acp.SessionListCapabilities{},
				Resume: &acp.SessionResumeCapabilities{},
				Close:  &acp.SessionCloseCapabilities{},
				Delete: &acp.SessionDeleteCapabilities{},
			},
		},
		AgentInfo: &acp.Implementation{Name: "zot", Title: &title, Version: h.agent.opts.Version},
	}
	// authMethods is always sent, [] when there are none: strict clients
	// read a missing list as an error.
	methods := h.agent.opts.AuthMethods
	if methods == nil {
		methods = []acp.AuthMethod{}
	}
	return jsonrpc.Result(initializeResult{InitializeResponse: res, AuthMethods: methods})
}

// initializeResult is acp.InitializeResponse with authMethods written
// even when empty: the field of the outer struct hides the embedded one,
// which omits an empty list.
type initializeResult struct {
	acp.InitializeResponse
	AuthMethods []acp.AuthMethod `json:"authMethods"`
}

// needsAuth returns the auth-required error when the provider of new
// sessions cannot be used, else nil.
func (h *conn) needsAuth() error {
	if h.agent.opts.Auth == nil {
		return nil
	}
	if err := h.agent.opts.Auth(); err != nil {
		return appError(acp.ErrorKindAuthRequired, "", "%s", err.Error())
	}
	return nil
}

// authenticate answers for one of the advertised methods: success when
// the provider has its key, else the auth-required error saying what to
// set. zot reads keys when it starts; it cannot take one here.
func (h *conn) authenticate(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.AuthenticateRequest
	if err := decode(req, &p, "methodId"); err != nil {
		return jsonrpc.Fail(err)
	}
	known := false
	for _, m := range h.agent.opts.AuthMethods {
		known = known || (m.Agent != nil && m.Agent.ID == p.MethodID)
	}
	if !known {
		return jsonrpc.Fail(jsonrpc.InvalidParams("methodId", "is not a method initialize advertised: %q", p.MethodID))
	}
	if err := h.needsAuth(); err != nil {
		return jsonrpc.Fail(err)
	}
	return jsonrpc.Result(acp.AuthenticateResponse{})
}

// checkCWD refuses a working directory that is not absolute.
func checkCWD(cwd string) error {
	if !strings.HasPrefix(cwd, "/") {
		return jsonrpc.InvalidParams("cwd", "must be an absolute path, got %q", cwd)
	}
	return nil
}

// sessionNew starts a session, answered before any update of it.
func (h *conn) sessionNew(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.NewSessionRequest
	if err := decode(req, &p, "cwd", "mcpServers"); err != nil {
		return jsonrpc.Fail(err)
	}
	if err := checkCWD(p.CWD); err != nil {
		return jsonrpc.Fail(err)
	}
	servers, err := h.agent.mcpServers(p.MCPServers)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if err := h.needsAuth(); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.agent.open(newSessionID(), p.CWD, h.principal(), true)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if err := s.startMCP(servers); err != nil {
		h.agent.releaseUnused(s)
		return jsonrpc.Fail(err)
	}
	h.attach(s)
	return h.announce(s, jsonrpc.Result(s.newAnswer()))
}

// attach records that this connection has s open.
func (h *conn) attach(s *acpSession) {
	s.attach(h)
	h.mu.Lock()
	h.open[s.id] = s
	h.mu.Unlock()
}

// sessionLoad opens a stored session and replays its whole history as
// session/update before answering.
func (h *conn) sessionLoad(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.LoadSessionRequest
	if err := decode(req, &p, "sessionId", "cwd", "mcpServers"); err != nil {
		return jsonrpc.Fail(err)
	}
	if err := checkCWD(p.CWD); err != nil {
		return jsonrpc.Fail(err)
	}
	servers, err := h.agent.mcpServers(p.MCPServers)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if !h.may(string(p.SessionID)) {
		return jsonrpc.Fail(unknownSession(string(p.SessionID)))
	}
	s, err := h.agent.reopen(string(p.SessionID), p.CWD)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	// The replay goes to this connection only, before its answer: the
	// session's other updates are held for it meanwhile, so a turn
	// another client runs cannot interleave with it (a busy session is
	// refused).
	if s.eng.Busy() {
		h.agent.releaseUnused(s)
		return jsonrpc.Fail(appError(acp.ErrorKindBusy, s.id, "session %s runs a prompt; load it after the answer", s.id))
	}
	msgs := s.eng.Transcript() // as it is now
	if err := s.startMCP(servers); err != nil {
		h.agent.releaseUnused(s)
		return jsonrpc.Fail(err)
	}
	h.attach(s)
	return h.announce(s, jsonrpc.Async(func(ctx context.Context) (any, error) {
		if err := s.replay(ctx, msgs, h); err != nil { // replay.go
			return nil, err
		}
		return s.openAnswer(), nil
	}))
}

// sessionResume opens a stored session without replaying it.
func (h *conn) sessionResume(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.ResumeSessionRequest
	if err := decode(req, &p, "sessionId", "cwd"); err != nil {
		return jsonrpc.Fail(err)
	}
	if err := checkCWD(p.CWD); err != nil {
		return jsonrpc.Fail(err)
	}
	servers, err := h.agent.mcpServers(p.MCPServers)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if !h.may(string(p.SessionID)) {
		return jsonrpc.Fail(unknownSession(string(p.SessionID)))
	}
	s, err := h.agent.reopen(string(p.SessionID), p.CWD)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if err := s.startMCP(servers); err != nil {
		h.agent.releaseUnused(s)
		return jsonrpc.Fail(err)
	}
	h.attach(s)
	return h.announce(s, jsonrpc.Result(s.openAnswer()))
}

// sessionClose closes the session for this connection: its running turn
// is cancelled (as session/cancel would) and, when no other connection
// has it open, its resources are freed.
func (h *conn) sessionClose(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.CloseSessionRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(string(p.SessionID))
	if err != nil {
		return jsonrpc.Fail(err)
	}
	s.cancelFrom(h)
	h.mu.Lock()
	delete(h.open, s.id)
	h.mu.Unlock()
	s.release(h)
	return jsonrpc.Result(acp.CloseSessionResponse{})
}

// sessionDelete removes a session and its file. An open session is
// closed first; one that runs a turn is refused as busy.
func (h *conn) sessionDelete(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.DeleteSessionRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	if !h.may(string(p.SessionID)) {
		return jsonrpc.Fail(unknownSession(string(p.SessionID)))
	}
	if err := h.agent.delete(string(p.SessionID)); err != nil {
		return jsonrpc.Fail(err)
	}
	h.mu.Lock()
	delete(h.open, string(p.SessionID))
	h.mu.Unlock()
	return jsonrpc.Result(acp.DeleteSessionResponse{})
}

// openSession returns session id when this connection has it open, else
// the error that says why not.
func (h *conn) openSession(id string) (*acpSession, error) {
	h.mu.Lock()
	s := h.open[id]
	h.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if h.may(id) {
		return nil, appError(acp.ErrorKindSessionNotOpen, id, "session %s is not open on this connection: session/load or session/resume it first", id)
	}
	return nil, appError(acp.ErrorKindUnknownSession, id, "no session %q", id)
}

// prompt admits a prompt (busy when the session runs one) and answers it
// when its turn has ended and its last update is on the way.
func (h *conn) prompt(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.PromptRequest
	if err := decode(req, &p, "sessionId", "prompt"); err != nil {
		return jsonrpc.Fail(err)
	}
	req.Params = nil // decoded: a long prompt's text is not kept twice for the turn
	s, err := h.openSession(string(p.SessionID))
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if _, _, slash := slashWords(p.Prompt); slash {
		if _, _, known := s.slashCommand(p.Prompt); !known {
			if s.eng.ExtensionsStarting() {
				// It may name a command of an extension that is still
				// starting: it is answered once they have started, as
				// every prompt waits for them.
				return jsonrpc.Async(func(ctx context.Context) (any, error) {
					s.eng.WaitExtensions(ctx)
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					return h.promptNow(s, p).Await(ctx)
				})
			}
		}
	}
	return h.promptNow(s, p)
}

// promptNow answers a prompt as the session's commands are now: a slash
// command of their list runs, anything else is submitted to the agent.
func (h *conn) promptNow(s *acpSession, p acp.PromptRequest) jsonrpc.Reply {
	if name, args, ok := s.slashCommand(p.Prompt); ok {
		return h.runCommand(s, name, args) // commands.go
	}
	if err := h.needsAuth(); err != nil {
		return jsonrpc.Fail(err)
	}
	in, err := promptInput(p.Prompt)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if err := promptOutput(in, p.Meta); err != nil {
		return jsonrpc.Fail(err)
	}
	if err := promptOverrides(in, p.Meta); err != nil { // overrides.go
		return jsonrpc.Fail(err)
	}
	// The title is pushed as the turn starts, before any update of it.
	w := engine.Work{Prompt: in}
	// A client's W3C trace context (_meta.traceparent, as MCP documents
	// it): zot's spans of the turn continue its trace.
	w.Traceparent, _ = p.Meta["traceparent"].(string)
	w.Tracestate, _ = p.Meta["tracestate"].(string)
	t, err := s.submitThen(h, w, func() { s.titleFrom(p.Prompt) }) // plan.go
	if err != nil {
		return jsonrpc.Fail(err)
	}
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		if err := h.await(ctx, s, t); err != nil {
			return nil, err
		}
		return t.result()
	}).Then(t.markAnswered)
}

// await waits for turn t to end. When the request is cancelled
// ($/cancel_request) the turn is cancelled and still awaited; when the
// connection ends the turn runs on into the file and nobody waits.
func (h *conn) await(ctx context.Context, s *acpSession, t *turn) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
	}
	if !cancelledByClient(ctx) {
		return ctx.Err()
	}
	s.cancelFrom(h)
	<-t.done
	return nil
}

// cancelledByClient reports whether ctx, an Async job's, ended because
// the client sent $/cancel_request for the request (rather than because
// the connection ended).
func cancelledByClient(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), jsonrpc.ErrRequestCancelled)
}

// submit starts work on the session, refused as busy when a turn runs.
// The request that started it answers with its result once it has ended
// and calls the turn's markAnswered once that answer is queued
// (jsonrpc.Reply.Then): an external event waiting for the session starts
// only then (events.go).
func (s *acpSession) submit(from *conn, w engine.Work) (*turn, error) {
	return s.submitThen(from, w, nil)
}

// submitThen is submit that calls started, when not nil, as the work
// starts: before any update of it is pushed.
func (s *acpSession) submitThen(from *conn, w engine.Work, started func()) (*turn, error) {
	t, err := s.start(from, w, started)
	if err != nil {
		return nil, s.agent.errorOf(err, s.id, "prompt")
	}
	return t, nil
}

// start is submitThen returning the engine's error as it is.
func (s *acpSession) start(from *conn, w engine.Work, started func()) (*turn, error) {
	t := &turn{s: s, from: from, done: make(chan struct{}), answered: make(chan struct{})}
	if m, ok := s.agent.opts.Host.Catalog().Lookup(s.eng.Provider(), s.eng.Model()); ok {
		t.contextSz = int64(m.ContextWindow)
	}
	w.Ctx = s.withClient(s.agent.ctx, from) // a turn outlives its client's connection
	w.Sink = s.sink(t)
	// The turn waits for room in the queue of the client that sent it;
	// the session's other clients are handed its updates without waiting.
	w.Ready = from.c.Ready
	err := s.eng.Submit(w, engine.RefuseBusy, func(wire.StartResult) {
		s.mu.Lock()
		s.turn = t
		s.events.last = t // events.go
		s.mu.Unlock()
		if started != nil {
			started()
		}
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// cancel serves session/cancel: the running turn ends with stopReason
// cancelled, and a permission request it waits on resolves as
// cancelled.
func (h *conn) cancel(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.CancelNotification
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(string(p.SessionID))
	if err != nil {
		return jsonrpc.Fail(err)
	}
	s.cancelFrom(h)
	return jsonrpc.Result(nil)
}

// cancelFrom cancels the running turn, if any.
func (s *acpSession) cancelFrom(*conn) {
	s.eng.Abort(false, nil)
}

// compact serves _zot/session/compact.
func (h *conn) compact(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionCompactRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	instr := ""
	if p.Instructions != nil {
		instr = *p.Instructions
	}
	t, err := s.submit(h, engine.Work{Compact: &engine.CompactInput{Instructions: instr}})
	if err != nil {
		return jsonrpc.Fail(err)
	}
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		if err := h.await(ctx, s, t); err != nil {
			return nil, err
		}
		res, err := t.result()
		if err != nil {
			return nil, err
		}
		if res.StopReason == acp.StopReasonCancelled {
			return nil, jsonrpc.NewError(jsonrpc.CodeCancelled, jsonrpc.KindCancelled, "the compaction was cancelled")
		}
		return acp.SessionCompactResponse{MessageCount: int64(s.eng.MessageCount())}, nil
	}).Then(t.markAnswered)
}

// models serves _zot/models/list.
func (h *conn) models(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.ModelsListRequest
	if err := decode(req, &p); err != nil {
		return jsonrpc.Fail(err)
	}
	a := h.agent
	provider, current := a.opts.Defaults.Provider, a.opts.Defaults.Model
	list := a.opts.Host.Models(provider)
	if p.SessionID != nil {
		s, err := h.openSession(*p.SessionID)
		if err != nil {
			return jsonrpc.Fail(err)
		}
		provider, current, list = s.eng.Provider(), s.eng.Model(), s.eng.Models()
	} else if current == "" {
		current, _ = a.opts.Host.Catalog().Default(provider)
	}
	out := acp.ModelsListResponse{Provider: provider, CurrentModelID: current, Models: make([]acp.ModelInfo, 0, len(list))}
	for _, m := range list {
		info := acp.ModelInfo{ModelID: m.ID, ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput, Reasoning: m.Reasoning}
		for _, l := range m.ReasoningLevels {
			info.ReasoningLevels = append(info.ReasoningLevels, string(l))
		}
		out.Models = append(out.Models, info)
	}
	return jsonrpc.Result(out)
}
