package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
)

// DefaultApprovalTools are the tools whose calls need approval when a
// session has an Approver and names none.
var DefaultApprovalTools = []string{"write", "edit", "bash"}

// ApprovalRequest is a tool call waiting for the embedder's approval.
type ApprovalRequest struct {
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
// called on the session's worker and the call waits for it; ctx ends when
// the prompt is aborted or the approval times out, and the call is then
// rejected whatever the approver answers.
type Approver func(ctx context.Context, req ApprovalRequest) Approval

// approval is the interceptor that asks an Approver.
type approval struct {
	ask     Approver
	timeout time.Duration
	tools   []string

	mu     sync.Mutex
	always map[string]bool // tools allowed for the rest of the session
}

func newApproval(ask Approver, timeout time.Duration, tools []string) *approval {
	if tools == nil {
		tools = DefaultApprovalTools
	}
	return &approval{ask: ask, timeout: timeout, tools: slices.Clone(tools), always: make(map[string]bool)}
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

func (a *approval) beforeTool(ctx context.Context, call agent.ToolCall) agent.Verdict {
	if !slices.Contains(a.tools, call.Name) {
		return agent.Verdict{}
	}
	a.mu.Lock()
	always := a.always[call.Name]
	a.mu.Unlock()
	if always {
		return agent.Verdict{}
	}
	ans := a.ask(ctx, ApprovalRequest{ToolCallID: call.ID, Tool: call.Name, Args: call.Args})
	if ctx.Err() != nil {
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
