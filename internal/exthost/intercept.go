package exthost

import (
	"context"
	"encoding/json"
	"fmt"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/telemetry"
	"zot.dev/zot/sdk/extwire"
)

// interceptor is the extension's place in the session's chain. It is
// added when the extension is started, in load order, and asks the
// extension only for what it subscribed to intercept.
func (e *ext) interceptor() agent.Interceptor {
	return agent.Interceptor{
		Name:       "extension " + e.name,
		Timeout:    e.h.cfg.InterceptTimeout,
		FailClosed: e.spec.Manifest.FailClosed != nil && *e.spec.Manifest.FailClosed,
		BeforeTurn: func(ctx context.Context, step int) agent.Verdict {
			s := int64(step)
			return e.intercept(ctx, extwire.InterceptEventTurnStart, func(f *extwire.EventInterceptFrame) { f.Step = &s })
		},
		BeforeTool: func(ctx context.Context, call agent.ToolCall) agent.Verdict {
			return e.intercept(ctx, extwire.InterceptEventToolCall, func(f *extwire.EventInterceptFrame) {
				f.ToolID, f.ToolName, f.ToolArgs = call.ID, call.Name, call.Args
			})
		},
		AfterMessage: func(ctx context.Context, msg *llm.Message) agent.Verdict {
			return e.intercept(ctx, extwire.InterceptEventAssistantMessage, func(f *extwire.EventInterceptFrame) { f.Text = msg.Text() })
		},
	}
}

// asks says what an interceptor does with an event.
type asks int

const (
	pass asks = iota // the extension does not intercept it
	ask              // ask the extension
	down             // it would be asked, but it is not running
)

// wants says whether the extension is asked about ev. An extension that
// is not running is "down" for what it intercepted, and, when it never
// said, for everything: a fail-closed guard that is not running blocks.
func (e *ext) wants(ev extwire.InterceptEvent) (asks, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.state {
	case ready:
		if e.intercepts[ev] {
			return ask, nil
		}
		return pass, nil
	case starting:
		return down, fmt.Errorf("extension %s is not ready", e.name)
	}
	if e.subscribed && !e.intercepts[ev] {
		return pass, nil
	}
	return down, fmt.Errorf("extension %s is not running: %v", e.name, e.failure)
}

// intercept asks the extension for its verdict on ev.
func (e *ext) intercept(ctx context.Context, ev extwire.InterceptEvent, fill func(*extwire.EventInterceptFrame)) agent.Verdict {
	switch a, err := e.wants(ev); a {
	case pass:
		return agent.Verdict{}
	case down:
		return agent.Verdict{Err: err}
	}
	// With telemetry on, the question is a span under the prompt's.
	ctx, span := telemetry.StartChild(ctx, "intercept "+e.name, telemetry.KindClient,
		telemetry.String("zot.extension", e.name), telemetry.String("zot.intercept.event", string(ev)))
	v := e.ask(ctx, ev, fill)
	switch {
	case v.Err != nil:
		span.Fail("extension_error", v.Err.Error())
	case v.Block:
		span.Set(telemetry.String("zot.intercept.verdict", "block"))
	case v.Args != nil || v.Text != nil:
		span.Set(telemetry.String("zot.intercept.verdict", "rewrite"))
	default:
		span.Set(telemetry.String("zot.intercept.verdict", "pass"))
	}
	span.End()
	return v
}

// ask sends the intercept frame and reads the extension's verdict.
func (e *ext) ask(ctx context.Context, ev extwire.InterceptEvent, fill func(*extwire.EventInterceptFrame)) agent.Verdict {
	ans, err := e.request(ctx, 0, func(id string) extwire.HostFrame {
		f := &extwire.EventInterceptFrame{ID: id, Event: ev}
		fill(f)
		return f
	})
	if err != nil {
		if ctx.Err() != nil {
			return agent.Verdict{} // the chain words the timeout, or the prompt was aborted
		}
		return agent.Verdict{Err: err}
	}
	r, ok := ans.(*extwire.EventInterceptResponseFrame)
	if !ok {
		return agent.Verdict{Err: fmt.Errorf("extension %s answered an intercept with a %s frame", e.name, ans.Type())}
	}
	if r.Block != nil && *r.Block {
		reason := r.Reason
		if reason == "" {
			reason = "blocked by extension " + e.name
		}
		return agent.Verdict{Block: true, Reason: reason}
	}
	var v agent.Verdict
	if ev == extwire.InterceptEventToolCall && len(r.ModifiedArgs) > 0 {
		v.Args = json.RawMessage(r.ModifiedArgs)
	}
	if ev == extwire.InterceptEventAssistantMessage && r.ReplaceText != "" {
		t := r.ReplaceText
		v.Text = &t
	}
	return v
}
