package acpserver

import (
	"context"
	"errors"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
)

// steer serves _zot/session/steer: the engine's Session.SteerRunning.
func (h *conn) steer(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionSteerRequest
	if err := decode(req, &p, "sessionId", "message"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	if err := s.eng.SteerRunning(p.Message, nil); err != nil {
		if errors.Is(err, agent.ErrNotRunning) {
			return jsonrpc.Fail(withSession(jsonrpc.InvalidParams("sessionId", "no turn runs on session %s to steer: send session/prompt", p.SessionID), p.SessionID))
		}
		return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, "message"))
	}
	return jsonrpc.Result(acp.SessionSteerResponse{Steered: true})
}

// injectContext serves _zot/session/inject_context.
func (h *conn) injectContext(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionInjectContextRequest
	if err := decode(req, &p, "sessionId", "text"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	source := ""
	if p.Source != nil {
		source = *p.Source
	}
	n, err := s.eng.InjectContext(p.Text, source)
	if err != nil {
		return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, "text"))
	}
	return jsonrpc.Result(acp.SessionInjectContextResponse{Pending: int64(n)})
}

// externalEvent serves _zot/session/external_event: the event runs as a
// turn of its own once the turns and events before it have run and been
// answered (events.go), answered when it ends. Cancelled by its client
// while it waits, it never runs; once it runs, it is cancelled as a
// prompt is.
func (h *conn) externalEvent(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionExternalEventRequest
	if err := decode(req, &p, "sessionId", "payload"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	source := "acp"
	if p.Source != nil && *p.Source != "" {
		source = *p.Source
	}
	in, err := s.eng.EventPrompt(source, p.Payload)
	if err != nil {
		return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, "payload"))
	}
	ticket, err := s.queueEvent()
	if err != nil {
		return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, "payload"))
	}
	var t *turn
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		var err error
		t, err = s.startEvent(ctx, h, ticket, engine.Work{Prompt: in})
		switch {
		case err != nil && cancelledByClient(ctx):
			return acp.SessionExternalEventResponse{StopReason: string(acp.StopReasonCancelled)}, nil
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			return nil, h.agent.errorOf(err, p.SessionID, "payload")
		}
		if err := h.await(ctx, s, t); err != nil {
			return nil, err
		}
		res, err := t.result()
		if err != nil {
			return nil, err
		}
		return acp.SessionExternalEventResponse{StopReason: string(res.StopReason)}, nil
	}).Then(func() {
		if t != nil {
			t.markAnswered()
		}
	})
}
