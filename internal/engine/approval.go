package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/internal/settings"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// DefaultApprovalTools are the tools whose calls need approval when a
// session has an Approver and names none.
var DefaultApprovalTools = []string{"write", "edit", "bash"}

// ApprovalRequest is a tool call waiting for the embedder's approval.
type ApprovalRequest struct {
	// ID names the request in the session, as the permission_request
	// event does: "perm-1", "perm-2", …
	ID string
	// ToolCallID is the call's id, as in the tool_call event.
	ToolCallID string
	// Tool is the tool's name.
	Tool string
	// Args are the arguments the call will run with (after any rewrite by
	// an interceptor earlier in the chain).
	Args json.RawMessage
	// Rule is the permission rule an AllowAlways answer with Save keeps
	// unless it names its own (`bash(go test *)`); empty when the session
	// cannot save rules (SessionConfig.Permissions names no Home).
	Rule string
	// Sandbox, when set, says the call writes where the session's sandbox
	// refuses (which path, which rule): AllowOnce lets this call write
	// there, AllowAlways lets the session write that path from now on;
	// such an answer is never saved as a rule.
	Sandbox string
	// ParentCallID, when set, says a sub-agent's call asks: the id of the
	// task call, in the session a door made, that started it
	// (docs/agents.md). ToolCallID is then the child's own call.
	ParentCallID string
}

// Decision is an approver's answer.
type Decision int

const (
	// Reject refuses the call: the model gets an error result saying so.
	Reject Decision = iota
	// AllowOnce lets this call run.
	AllowOnce
	// AllowAlways lets this call run, and every later call of the same
	// tool in this session without asking; with Save, the calls the
	// saved rule matches, in this session and later ones.
	AllowAlways
)

// Approval is an approver's answer to one request.
type Approval struct {
	Decision Decision
	// Reason, for Reject, is shown to the model.
	Reason string
	// Save, with AllowAlways, also keeps the answer as a permission rule
	// in the config.json of SessionConfig.Permissions.Home: for the
	// session's folder (settings.ScopeProject) or every folder
	// (settings.ScopeEverywhere). Empty: the answer holds for this
	// session only.
	Save settings.Scope
	// Rule, with Save, is the rule to keep in place of the request's
	// Rule; it must name the request's tool and match the call.
	Rule string
}

// ErrBadRule is returned (wrapped) by Session.AnswerApproval for a rule
// to save that does not parse or does not match the call (code
// invalid_params).
var ErrBadRule = wire.Sentinel(wire.CodeInvalidParams, "the rule cannot be saved")

// Approver asks whoever embeds zot whether a tool call may run. It is
// called on the session's worker, after the request's permission_request
// event was delivered, and the call waits for it; ctx ends when the
// prompt is aborted or the approval times out, and the call is then
// rejected whatever the approver answers.
type Approver func(ctx context.Context, req ApprovalRequest) Approval

// ErrNoApprovalRequest is returned (wrapped) by Session.AnswerApproval when
// no request of that id waits for an answer (code unknown_request).
var ErrNoApprovalRequest = wire.Sentinel(wire.CodeUnknownRequest, "no such permission request")

// approval is the interceptor that asks for approval: an Approver, or the
// door, whose client answers each request's permission_request event
// with Session.AnswerApproval.
type approval struct {
	ask      Approver // nil when the door answers
	timeout  time.Duration
	tools    []string
	byAnswer bool
	// other, when set, says whether a tool not in tools needs approval
	// too (SessionConfig.ApproveOtherTools).
	other func(tool string) bool

	// locked: the mode cannot change (--permission deny).
	locked bool

	// rules are the permission rules (internal/settings), applied before
	// the mode; nil when the session has none.
	rules *settings.Rules
	// warn tells the user what could not be saved.
	warn func(string)
	// sandbox is the session's sandbox, and cwd where the tools resolve
	// relative paths: a write it refuses is asked about (sandbox.go).
	sandbox *sandbox.Guard
	cwd     string

	mu      sync.Mutex
	mode    PermissionMode      // decides before anybody is asked (modes.go)
	always  map[string]bool     // tools allowed for the rest of the session
	issued  int                 // requests numbered so far
	waiting map[string]*pending // requests the door may answer, by id
	ended   string              // when set, no answer can come: requests are rejected with this reason
	away    string              // as ended, for a while (awayWhile)
}

// pending is a request that waits for the door's answer.
type pending struct {
	req ApprovalRequest
	ch  chan answered
}

// answered is an answer, and whether its rule was saved already.
type answered struct {
	Approval
	saved bool
}

func newApproval(ask Approver, byAnswer bool, timeout time.Duration, tools []string, mode PermissionMode, locked bool) *approval {
	if tools == nil {
		tools = DefaultApprovalTools
	}
	return &approval{
		ask: ask, byAnswer: byAnswer, timeout: timeout, tools: slices.Clone(tools),
		mode: mode, locked: locked,
		always: make(map[string]bool), waiting: make(map[string]*pending),
	}
}

// covers reports whether a call of tool needs approval.
func (a *approval) covers(tool string) bool {
	return slices.Contains(a.tools, tool) || (a.other != nil && a.other(tool))
}

// interceptor returns the approval step of the chain: it runs after every
// guard, fails closed, and is bounded only by its own timeout.
func (a *approval) interceptor() agent.Interceptor {
	timeout := a.timeout
	if timeout <= 0 {
		timeout = -1 // no bound but the prompt's own context
	}
	return agent.Interceptor{
		Name:       "approval",
		Order:      agent.OrderApproval,
		Timeout:    timeout,
		FailClosed: true,
		BeforeTool: a.beforeTool,
	}
}

// beforeTool lets the session's mode decide first; what the mode leaves
// to ask is numbered, its permission_request event delivered into the
// running work, and the answer awaited: the Approver's, or the door's. A
// request the door may answer is open from before its event is
// delivered, so an answer can never arrive too early.
func (a *approval) beforeTool(ctx context.Context, call agent.ToolCall) agent.Verdict {
	// The rules come first, for every tool and in every mode: a deny
	// rule wins over everything; an allow rule is looked at once the mode
	// has had its say.
	var rule settings.Verdict
	if a.rules != nil {
		if rule = a.rules.Decide(call.Name, call.Args); rule.Deny {
			return agent.Verdict{Block: true, Reason: rule.Reason()}
		}
	}
	if v, asked := a.sandboxRefusal(ctx, call); asked {
		return v
	}
	if !a.covers(call.Name) {
		return agent.Verdict{}
	}
	a.mu.Lock()
	switch decide(a.mode, call.Name) {
	case modeRuns:
		a.mu.Unlock()
		return agent.Verdict{}
	case modeRefuses:
		a.mu.Unlock()
		reason := "the session is in read-only mode"
		if a.locked {
			reason += " (zot runs with --permission deny)"
		}
		return agent.Verdict{Block: true, Reason: reason}
	}
	if rule.Allow || a.always[call.Name] {
		a.mu.Unlock()
		return agent.Verdict{}
	}
	if a.ask == nil && !a.byAnswer {
		a.mu.Unlock()
		return agent.Verdict{Block: true, Reason: "the session is in " + string(a.mode) + " mode and nobody can answer its permission requests here"}
	}
	if why := cmp.Or(a.ended, a.away); why != "" {
		a.mu.Unlock()
		return agent.Verdict{Block: true, Reason: "no answer can come: " + why}
	}
	req := ApprovalRequest{ToolCallID: call.ID, Tool: call.Name, Args: call.Args}
	if a.rules != nil && a.rules.Home != "" {
		req.Rule = settings.Suggest(settings.Call{Tool: call.Name, Args: call.Args, CWD: a.rules.Dir})
	}
	ans, req, stop := a.request(ctx, req)
	if stop != nil {
		return *stop
	}
	switch ans.Decision {
	case AllowAlways:
		if ans.Save != "" && !ans.saved {
			err := a.save(req, ans.Approval)
			if err == nil {
				return agent.Verdict{}
			}
			if a.warn != nil {
				a.warn("the answer to " + req.ID + " holds for this session only: " + err.Error())
			}
		} else if ans.saved {
			return agent.Verdict{}
		}
		a.mu.Lock()
		a.always[call.Name] = true
		a.mu.Unlock()
		return agent.Verdict{}
	case AllowOnce:
		return agent.Verdict{}
	}
	reason := "the user rejected the call"
	if ans.Reason != "" {
		reason += ": " + ans.Reason
	}
	return agent.Verdict{Block: true, Reason: reason}
}

// sandboxRefusal asks about a write or edit the session's sandbox
// refuses, when somebody can answer and the mode asks (ask, accept_edits;
// never auto, and read_only refuses the call anyway): an allow lets the call write that path (once, or from now on),
// and also stands for the approval the mode would ask. asked is false
// when there was nothing to ask: the call goes on, and the tool refuses
// the path itself with the sandbox's error.
func (a *approval) sandboxRefusal(ctx context.Context, call agent.ToolCall) (agent.Verdict, bool) {
	if a.sandbox == nil || (call.Name != "write" && call.Name != "edit") {
		return agent.Verdict{}, false
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(call.Args, &args) != nil || args.Path == "" {
		return agent.Verdict{}, false
	}
	err := a.sandbox.Policy().CheckWrite(tools.ResolvePath(a.cwd, args.Path))
	var denied *sandbox.Denied
	if !errors.As(err, &denied) {
		return agent.Verdict{}, false
	}
	a.mu.Lock()
	// auto asks nobody, read_only refuses the call anyway.
	if a.mode == ModeAuto || a.mode == ModeReadOnly || (a.ask == nil && !a.byAnswer) || a.ended != "" || a.away != "" {
		a.mu.Unlock()
		return agent.Verdict{}, false
	}
	ans, _, stop := a.request(ctx, ApprovalRequest{ToolCallID: call.ID, Tool: call.Name, Args: call.Args, Sandbox: denied.Error()})
	if stop != nil {
		return *stop, true
	}
	real := denied.Real
	if real == "" {
		real = denied.Path
	}
	switch ans.Decision {
	case AllowOnce:
		a.sandbox.AllowOnce(real)
		return agent.Verdict{}, true
	case AllowAlways:
		a.sandbox.Allow(real)
		return agent.Verdict{}, true
	}
	reason := "the user did not allow writing outside the sandbox"
	if ans.Reason != "" {
		reason += " (" + ans.Reason + ")"
	}
	return agent.Verdict{Block: true, Reason: reason + ": " + denied.Error()}, true
}

// request numbers req, delivers its permission_request and waits for
// the answer: the Approver's, or the door's. It is called with a.mu held
// and releases it. A verdict is returned in place of an answer when none
// can come (the door ended, the prompt was aborted, the approval timed
// out).
func (a *approval) request(ctx context.Context, req ApprovalRequest) (ans answered, _ ApprovalRequest, stop *agent.Verdict) {
	a.issued++
	req.ID = "perm-" + strconv.Itoa(a.issued)
	var answer chan answered
	if a.byAnswer {
		answer = make(chan answered, 1)
		a.waiting[req.ID] = &pending{req: req, ch: answer}
		defer func() {
			a.mu.Lock()
			delete(a.waiting, req.ID)
			a.mu.Unlock()
		}()
	}
	a.mu.Unlock()

	req.ParentCallID = parentCallOf(ctx)
	ev := &wire.PermissionRequestEvent{RequestID: req.ID, CallID: req.ToolCallID, Tool: req.Tool, Args: req.Args, Rule: req.Rule, Sandbox: req.Sandbox}
	if a.timeout > 0 {
		ms := max(a.timeout.Milliseconds(), 1)
		ev.TimeoutMs = &ms
	}
	emitApproval(ctx, ev) // subagents.go: a child's reaches the session a door made

	if a.byAnswer {
		select {
		case got, ok := <-answer:
			if !ok {
				a.mu.Lock()
				why := a.ended
				a.mu.Unlock()
				return ans, req, &agent.Verdict{Block: true, Reason: "no answer can come: " + why}
			}
			ans = got
		case <-ctx.Done():
		}
	} else {
		ans.Approval = a.ask(ctx, req)
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && a.timeout > 0 {
			return ans, req, &agent.Verdict{Err: fmt.Errorf("no answer within %s", a.timeout)}
		}
		return ans, req, &agent.Verdict{Err: fmt.Errorf("no answer: %w", context.Cause(ctx))}
	}
	return ans, req, nil
}

// save keeps ans, an AllowAlways answer to req with Save, as a
// permission rule: its own Rule, which must match the call, or the
// request's. Errors: ErrBadRule for a rule that does not parse or match,
// a *settings.FileError (settings_error) for a file that cannot be used.
func (a *approval) save(req ApprovalRequest, ans Approval) error {
	if a.rules == nil || a.rules.Home == "" {
		return fmt.Errorf("%w: this session has no settings file to save it in", ErrBadRule)
	}
	switch ans.Save {
	case settings.ScopeProject, settings.ScopeEverywhere:
	default:
		return fmt.Errorf("%w: save %q: want project or everywhere", ErrBadRule, ans.Save)
	}
	rule := req.Rule
	if ans.Rule != "" {
		r, err := settings.MatchesCall(ans.Rule, req.Tool, req.Args, a.rules.Dir)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadRule, err)
		}
		rule = r.String()
	}
	return a.rules.Save(ans.Save, rule)
}

// answer resolves the waiting request id. An AllowAlways answer with
// Save is saved first: when that fails the request still waits.
func (a *approval) answer(id string, ans Approval) error {
	a.mu.Lock()
	p, ok := a.waiting[id]
	if !ok {
		defer a.mu.Unlock()
		if n, isOurs := strings.CutPrefix(id, "perm-"); isOurs {
			if k, err := strconv.Atoi(n); err == nil && k >= 1 && k <= a.issued {
				return fmt.Errorf("%w: %s no longer waits (it was answered, timed out or aborted)", ErrNoApprovalRequest, id)
			}
		}
		return fmt.Errorf("%w: %q", ErrNoApprovalRequest, id)
	}
	a.mu.Unlock()
	saved := false
	if ans.Decision == AllowAlways && ans.Save != "" {
		if err := a.save(p.req, ans); err != nil {
			return err
		}
		saved = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting[id] != p {
		return fmt.Errorf("%w: %s no longer waits (it was answered, timed out or aborted)", ErrNoApprovalRequest, id)
	}
	delete(a.waiting, id)
	p.ch <- answered{Approval: ans, saved: saved} // buffered, and the only send
	return nil
}

// awayWhile rejects the requests asked while f runs with why: nobody
// can answer them then (a turn finished while the session opens, before
// any client holds it).
func (a *approval) awayWhile(why string, f func()) {
	a.mu.Lock()
	a.away = why
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.away = ""
		a.mu.Unlock()
	}()
	f()
}

// end rejects the waiting requests, and every later one at once, with why.
func (a *approval) end(why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended == "" {
		a.ended = why
	}
	for id, p := range a.waiting {
		delete(a.waiting, id)
		close(p.ch)
	}
}
