package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/settings"
)

// The options of every session/request_permission, by id.
var permissionOptions = []acp.PermissionOption{
	{OptionID: "allow_once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
	{OptionID: "allow_always", Name: "Allow always", Kind: acp.PermissionOptionKindAllowAlways},
	{OptionID: "reject_once", Name: "Reject once", Kind: acp.PermissionOptionKindRejectOnce},
	{OptionID: "reject_always", Name: "Reject always", Kind: acp.PermissionOptionKindRejectAlways},
}

// optionAllowSave is the option that keeps "allow always" as a
// permission rule for the session's folder (docs/settings.md), offered
// when the session can save rules.
const optionAllowSave = "allow_always_folder"

// needsApproval reports whether a call of tool waits for a decision:
// the client's answer, or the mode's refusal.
func (s *acpSession) needsApproval(tool string) bool {
	return !s.eng.RunsUnasked(tool)
}

// approver is the engine Approver of a session: asked only for the calls
// the session's mode leaves to the client. *sp is set once the session
// exists (before any prompt).
func (a *Agent) approver(sp **acpSession) engine.Approver {
	return func(ctx context.Context, req engine.ApprovalRequest) engine.Approval {
		s := *sp
		ans := s.ask(ctx, req)
		if ans.Decision != engine.Reject && req.ParentCallID == "" {
			s.push(item{update: &acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{
				ToolCallID: acp.ToolCallId(req.ToolCallID),
				Status:     acp.ToolCallStatusInProgress,
			}}})
		}
		return ans
	}
}

// ask asks the client that sent the running prompt whether the call may
// run, after every update before it reached that client. A "reject
// always" answer is remembered for the rest of the session; "allow
// always" the engine remembers.
func (s *acpSession) ask(ctx context.Context, req engine.ApprovalRequest) engine.Approval {
	s.mu.Lock()
	rejected := s.rejectAlways[req.Tool]
	var from *conn
	if s.turn != nil {
		from = s.turn.from
	}
	s.mu.Unlock()
	if rejected {
		return engine.Approval{Decision: engine.Reject, Reason: "the user rejected every " + req.Tool + " call of this session"}
	}
	if from == nil {
		return engine.Approval{Decision: engine.Reject, Reason: "no client can answer"}
	}
	title, path := (&turn{s: s}).describe(req.Tool, req.Args)
	callID := req.ToolCallID
	if req.ParentCallID != "" {
		// A sub-agent's call: the client knows the task call that
		// started it, which shows the sub-agent's calls in its content.
		callID, title = req.ParentCallID, "Sub-agent: "+title
	}
	tc := acp.ToolCallUpdate{
		ToolCallID: acp.ToolCallId(callID),
		Title:      &title,
		Kind:       kindOf(req.Tool),
		Status:     acp.ToolCallStatusPending,
		RawInput:   req.Args,
	}
	if path != "" {
		tc.Locations = []acp.ToolCallLocation{{Path: path}}
	}
	options := permissionOptions
	if req.Sandbox != "" {
		// A write the sandbox refuses: allowed for this call, or for this
		// path from now on; never kept as a rule.
		title = "Outside the sandbox: " + title
		options = []acp.PermissionOption{
			{OptionID: "allow_once", Name: "Allow this write once", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionID: "allow_always", Name: "Always allow writing this path in this session", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionID: "reject_once", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		}
		tc.Meta = map[string]any{"zot": map[string]any{"sandbox": req.Sandbox}}
	} else if req.Rule != "" {
		// The session can keep the answer as a rule: offered after
		// "Allow always", which holds for this session only.
		options = append(slices.Clone(permissionOptions[:2]), acp.PermissionOption{
			OptionID: optionAllowSave, Name: "Always allow " + req.Rule + " in this folder", Kind: acp.PermissionOptionKindAllowAlways,
		})
		options = append(options, permissionOptions[2:]...)
	}
	params := acp.RequestPermissionRequest{SessionID: acp.SessionId(s.id), ToolCall: tc, Options: options}
	var (
		raw json.RawMessage
		err error
	)
	to, gone := from, map[*conn]bool{}
	select {
	case <-from.c.Done():
		gone[from] = true
		to = s.askee(ctx, from, gone)
	default:
	}
	for {
		if to == nil {
			return engine.Approval{Decision: engine.Reject, Reason: "the client that sent the prompt has left"}
		}
		raw, err = to.c.Call(ctx, acp.MethodSessionRequestPermission, params)
		if err != nil && errors.Is(err, jsonrpc.ErrClosed) && ctx.Err() == nil {
			// It left before answering: ask a client that comes back,
			// when one may.
			gone[to] = true
			to = s.askee(ctx, from, gone)
			continue
		}
		break
	}
	if err != nil {
		return engine.Approval{Decision: engine.Reject, Reason: fmt.Sprintf("no answer: %v", err)}
	}
	var res acp.RequestPermissionResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		s.agent.logf("session %s: a permission answer that does not decode: %v", s.id, err)
		return engine.Approval{Decision: engine.Reject, Reason: "the client's answer did not decode"}
	}
	if res.Outcome.Selected == nil {
		return engine.Approval{Decision: engine.Reject, Reason: "cancelled"}
	}
	switch res.Outcome.Selected.OptionID {
	case "allow_once":
		return engine.Approval{Decision: engine.AllowOnce}
	case "allow_always":
		return engine.Approval{Decision: engine.AllowAlways}
	case optionAllowSave:
		if req.Rule != "" {
			return engine.Approval{Decision: engine.AllowAlways, Save: settings.ScopeProject}
		}
		return engine.Approval{Decision: engine.Reject, Reason: fmt.Sprintf("the client chose an option that was not offered (%q)", optionAllowSave)}
	case "reject_always":
		s.mu.Lock()
		s.rejectAlways[req.Tool] = true
		s.mu.Unlock()
	case "reject_once":
	default:
		return engine.Approval{Decision: engine.Reject, Reason: fmt.Sprintf("the client chose an option that was not offered (%q)", res.Outcome.Selected.OptionID)}
	}
	return engine.Approval{Decision: engine.Reject}
}

// askee returns the client to ask a permission question of the turn
// from started, once from has left (and the clients of gone too): a
// client of the network listener (not the daemon's own user) may come
// back, and the client of from's principal that opened the session last
// (and got its answer) is asked, waiting up to ReconnectGrace for one to
// open it. nil when none is there in time, or ctx ends.
func (s *acpSession) askee(ctx context.Context, from *conn, gone map[*conn]bool) *conn {
	grace := s.agent.opts.ReconnectGrace
	who := from.c.Peer()
	if who.Principal == "" || grace <= 0 {
		return nil
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i := len(s.clients) - 1; i >= 0; i-- {
			c := s.clients[i]
			_, opening := s.unanswered[c]
			select {
			case <-c.c.Done():
				continue
			default:
			}
			if p := c.c.Peer(); !opening && p.Principal == who.Principal && !gone[c] {
				s.mu.Unlock()
				return c
			}
		}
		if s.joined == nil {
			s.joined = make(chan struct{})
		}
		joined := s.joined
		s.mu.Unlock()
		select {
		case <-joined:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}
