package engine

import (
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
}

// Decision is an approver's answer.
type Decision int

const (
	// Reject refuses the call: the model gets an error result saying so.
	Reject Decision = iota
	// AllowOnce lets this call run.
	AllowOnce
	// AllowAlways lets this call run, and every later call of the same
	// tool in this session without asking.
	AllowAlways
)

// Approval is an approver's answer to one request.
type Approval struct {
	Decision Decision
	// Reason, for Reject, is shown to the model.
	Reason string
}

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

	mu      sync.Mutex
	mode    PermissionMode           // decides before anybody is asked (modes.go)
	always  map[string]bool          // tools allowed for the rest of the session
	issued  int                      // requests numbered so far
	waiting map[string]chan Approval // requests the door may answer, by id
	ended   string                   // when set, no answer can come: requests are rejected with this reason
}

func newApproval(ask Approver, byAnswer bool, timeout time.Duration, tools []string, mode PermissionMode, locked bool) *approval {
	if tools == nil {
		tools = DefaultApprovalTools
	}
	return &approval{
		ask: ask, byAnswer: byAnswer, timeout: timeout, tools: slices.Clone(tools),
		mode: mode, locked: locked,
		always: make(map[string]bool), waiting: make(map[string]chan Approval),
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
	if a.always[call.Name] {
		a.mu.Unlock()
		return agent.Verdict{}
	}
	if a.ask == nil && !a.byAnswer {
		a.mu.Unlock()
		return agent.Verdict{Block: true, Reason: "the session is in " + string(a.mode) + " mode and nobody can answer its permission requests here"}
	}
	if a.ended != "" {
		why := a.ended
		a.mu.Unlock()
		return agent.Verdict{Block: true, Reason: "no answer can come: " + why}
	}
	a.issued++
	req := ApprovalRequest{ID: "perm-" + strconv.Itoa(a.issued), ToolCallID: call.ID, Tool: call.Name, Args: call.Args}
	var answer chan Approval
	if a.byAnswer {
		answer = make(chan Approval, 1)
		a.waiting[req.ID] = answer
		defer func() {
			a.mu.Lock()
			delete(a.waiting, req.ID)
			a.mu.Unlock()
		}()
	}
	a.mu.Unlock()

	ev := &wire.PermissionRequestEvent{RequestID: req.ID, CallID: req.ToolCallID, Tool: req.Tool, Args: req.Args}
	if a.timeout > 0 {
		ms := max(a.timeout.Milliseconds(), 1)
		ev.TimeoutMs = &ms
	}
	emitInto(ctx, ev)

	var ans Approval
	if a.byAnswer {
		select {
		case got, ok := <-answer:
			if !ok {
				a.mu.Lock()
				why := a.ended
				a.mu.Unlock()
				return agent.Verdict{Block: true, Reason: "no answer can come: " + why}
			}
			ans = got
		case <-ctx.Done():
		}
	} else {
		ans = a.ask(ctx, req)
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && a.timeout > 0 {
			return agent.Verdict{Err: fmt.Errorf("no answer within %s", a.timeout)}
		}
		return agent.Verdict{Err: fmt.Errorf("no answer: %w", context.Cause(ctx))}
	}
	switch ans.Decision {
	case AllowAlways:
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

// answer resolves the waiting request id.
func (a *approval) answer(id string, ans Approval) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch, ok := a.waiting[id]
	if !ok {
		if n, isOurs := strings.CutPrefix(id, "perm-"); isOurs {
			if k, err := strconv.Atoi(n); err == nil && k >= 1 && k <= a.issued {
				return fmt.Errorf("%w: %s no longer waits (it was answered, timed out or aborted)", ErrNoApprovalRequest, id)
			}
		}
		return fmt.Errorf("%w: %q", ErrNoApprovalRequest, id)
	}
	delete(a.waiting, id)
	ch <- ans // buffered, and the only send
	return nil
}

// end rejects the waiting requests, and every later one at once, with why.
func (a *approval) end(why string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended == "" {
		a.ended = why
	}
	for id, ch := range a.waiting {
		delete(a.waiting, id)
		close(ch)
	}
}
