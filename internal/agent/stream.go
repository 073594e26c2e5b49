package agent

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/sdk/wire"
)

// stepResult is what a completed model call asks for next.
type stepResult struct {
	// stop is end_turn, length or refusal; with calls, end_turn means the
	// tools run, and length means none of them does (one was cut).
	stop   wire.StopReason
	reason string // the provider's reason for a refusal or a cut call
	calls  []*llm.ToolCallBlock
	tools  *ToolView // the tools this step offered; its calls run against them
	// empty says why the step's answer is empty (no text, no tool call),
	// "" when it is not: the prompt then fails rather than end in silence.
	empty string
}

// call makes the model call of one step and emits its events up to the
// tool_call events. On failure or abort it also emits the step's turn_end
// and returns the error Prompt returns.
func (p *promptRun) call(step int) (*stepResult, error) {
	a := p.a
	model, level := a.modelFor(p.ctx)
	maxTokens := a.maxTokens
	if o := overridesOf(p.ctx); o != nil && o.MaxTokens > 0 {
		maxTokens = o.MaxTokens
	}
	view := a.toolset.View()
	if model.BoundThinking {
		if p.view == nil {
			p.view = view
		}
		view = p.view
	}
	req := &llm.Request{
		Model:     model.ID,
		System:    a.systemFor(model.BoundThinking),
		Messages:  a.snapshot(),
		Tools:     view.Specs(),
		MaxTokens: maxTokens,
		Reasoning: level,
	}
	if out := outputSchemaOf(p.ctx); out != nil {
		req.OutputSchema = out.Raw()
		req.System += "\n\n" + out.Instructions()
	}
	model.Describe(req)
	c := &collector{emit: p.emit}
	resp, err := p.stream(step, req, c)
	if err != nil && !c.hasStarted() && p.ctx.Err() == nil && !a.autoOff && !p.overflowRetried && contextOverflow(err) {
		// The request no longer fits the context window: compact once and
		// try again with the shorter transcript.
		p.overflowRetried = true
		switch cerr := p.compactForOverflow(); {
		case IsAborted(cerr):
			return nil, cerr
		case cerr == nil:
			req.Messages = a.snapshot()
			c = &collector{emit: p.emit}
			resp, err = p.stream(step, req, c)
		}
	}
	if err != nil && !c.hasStarted() && p.ctx.Err() == nil && !p.boundRetried && boundRejected(err) && sendsThinking(req.Messages) {
		// Thinking sent back was refused (bound to another conversation,
		// or not verifiable): no retry of the same request can succeed.
		// Drop the provider's thinking and signatures from the transcript
		// and send once more.
		p.boundRetried = true
		a.dropThinking(a.provider.Name())
		req.Messages = a.snapshot()
		c = &collector{emit: p.emit}
		resp, err = p.stream(step, req, c)
	}
	if resp == nil {
		resp = &llm.Response{}
	}
	if c.hasStarted() || resp.Usage != (llm.Usage{}) {
		callTotals, total := a.meter.Add(a.priced(model), resp.Usage)
		p.emit(usageEvent(callTotals, total))
	}
	if err != nil || p.ctx.Err() != nil {
		p.keepPartial(resp.Message)
		if p.ctx.Err() != nil {
			return nil, p.abort()
		}
		e, ok := err.(*Error)
		if !ok {
			e = providerError(err)
		}
		p.turnEnd(wire.StopError, e.Error())
		return nil, e
	}
	if resp.ContextFull {
		p.contextFull = true
	}
	u := resp.Usage
	a.mu.Lock()
	a.context = u.Input + u.CacheRead + u.CacheWrite + u.Output
	a.mu.Unlock()

	if resp.Stop == llm.StopRefusal {
		// A refused answer is not kept: the vendors ask for the turn that
		// was refused to leave the context, or the refusal repeats.
		return &stepResult{stop: wire.StopRefusal, reason: oneLine(resp.Reason), tools: view}, nil
	}
	msg := resp.Message
	msg.Role = llm.RoleAssistant
	msg.Content = dropEmptyText(msg.Content)
	stampModel(&msg, model.ID)
	calls := msg.ToolCalls()
	raw := c.rawArgs(calls)
	fixCallIDs(calls, step)
	msg.Meta = withRawArgs(msg.Meta, raw)
	// The model that wrote the message: the session store's index shows
	// a session's model from it.
	meta := maps.Clone(msg.Meta)
	if meta == nil {
		meta = make(map[string]string, 1)
	}
	meta[metaModel] = model.ID
	msg.Meta = meta
	shown := msg.Content
	if a.chain.Len() > 0 {
		v := a.chain.afterMessage(p.ctx, msg)
		if p.ctx.Err() != nil {
			return nil, p.abort()
		}
		if v.Block {
			e := &Error{Code: wire.CodeBlocked, Message: "assistant message blocked: " + blockReason(v.Reason)}
			p.turnEnd(wire.StopError, e.Message)
			return nil, e
		}
		if v.Text != nil {
			shown = replaceText(msg.Content, *v.Text)
		}
	}
	if hasText(msg.Content) || len(calls) > 0 {
		p.keep(msg, shown)
		for _, tc := range calls {
			p.emit(&wire.ToolCallEvent{ID: tc.ID, Name: tc.Name, Args: wireArgs(&msg, tc)})
		}
	}
	stop := wire.StopEndTurn
	if resp.Stop == llm.StopLength {
		stop = wire.StopLength
	}
	res := &stepResult{stop: stop, reason: oneLine(resp.Reason), calls: calls, tools: view}
	if !hasText(msg.Content) && len(calls) == 0 {
		res.empty = emptyAnswer(resp)
	}
	return res, nil
}

// emptyAnswer says that the model ended its answer with nothing in it:
// no text and no tool call (thinking alone is not an answer), with the
// vendor's finish reason and zot's reason when it has one.
func emptyAnswer(resp *llm.Response) string {
	finish := resp.Finish
	if finish == "" {
		finish = "none given"
	}
	msg := "the model ended its answer without any text or tool call (finish reason: " + oneLine(finish) + ")"
	if resp.Reason != "" {
		msg += ": " + oneLine(resp.Reason)
	}
	return msg
}

// priced returns m with the prices of today, when it has announced price
// changes (the clock is read only then).
func (a *Agent) priced(m models.Model) models.Model {
	if len(m.Changes) == 0 {
		return m
	}
	return m.At(a.timeNow())
}

// stream makes the model call of step (through the model middleware),
// turning a panic in the provider or a middleware into an error.
func (p *promptRun) stream(step int, req *llm.Request, c *collector) (resp *llm.Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, &Error{Code: wire.CodeInternal, Message: oneLine(fmt.Sprintf("provider %s panicked: %s", p.a.provider.Name(), panicText(v)))}
		}
	}()
	return p.a.callModel(p.ctx, ModelCallTurn, step, req, c.sink)
}

// keep adds an assistant message to the transcript and emits it as
// assistant_message showing the shown content (the message's own, unless
// an interceptor re-worded it).
func (p *promptRun) keep(msg llm.Message, shown []llm.Block) {
	msg.Time = p.a.timeNow()
	p.a.appendMessage(msg)
	p.kept = true
	view := msg
	view.Content = shown
	p.emit(&wire.AssistantMessageEvent{Content: wireBlocks(&view), Time: wireTime(msg.Time)})
}

// keepPartial keeps the text of a message cut short by a failure or an
// abort, as a plain assistant message; tool calls and thinking are
// dropped, since the calls never ran and the thinking may lack the
// signature providers need to accept it back. The AfterMessage
// interceptors see it first (and may drop it or re-word what is shown).
func (p *promptRun) keepPartial(m llm.Message) {
	content := textOnly(m.Content)
	if len(content) == 0 {
		return
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: content}
	shown := content
	if p.a.chain.Len() > 0 {
		// The prompt's own context may have ended (an abort): the
		// interceptors still get their own time to look at the text.
		v := p.a.chain.afterMessage(context.WithoutCancel(p.ctx), msg)
		if v.Block {
			return
		}
		if v.Text != nil {
			shown = textOnly(replaceText(content, *v.Text))
		}
	}
	p.keep(msg, shown)
}

// collector turns the provider's streaming events into wire events and
// keeps the argument text of each tool call.
type collector struct {
	emit func(wire.Event)

	mu      sync.Mutex
	started bool
	args    map[string]*strings.Builder
}

// sink receives the provider's events. The first event of any kind
// (normally EventStart) is reported as assistant_start.
func (c *collector) sink(ev llm.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.started = true
		c.emit(&wire.AssistantStartEvent{})
	}
	switch ev.Kind {
	case llm.EventTextDelta:
		if ev.Text != "" {
			c.emit(&wire.TextDeltaEvent{Delta: ev.Text})
		}
	case llm.EventThinkingDelta:
		if ev.Text != "" {
			c.emit(&wire.ThinkingDeltaEvent{Delta: ev.Text})
		}
	case llm.EventToolStart:
		c.emit(&wire.ToolUseStartEvent{ID: ev.ToolID, Name: ev.ToolName})
	case llm.EventToolArgsDelta:
		if c.args == nil {
			c.args = make(map[string]*strings.Builder)
		}
		b := c.args[ev.ToolID]
		if b == nil {
			b = new(strings.Builder)
			c.args[ev.ToolID] = b
		}
		b.WriteString(ev.Text)
		if ev.Text != "" {
			c.emit(&wire.ToolUseArgsEvent{ID: ev.ToolID, Delta: ev.Text})
		}
	case llm.EventToolEnd:
		c.emit(&wire.ToolUseEndEvent{ID: ev.ToolID})
	}
}

func (c *collector) hasStarted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// rawArgs returns the streamed argument text of each call whose arguments
// were invalid, so that the transcript can show what the model wrote (see
// wireArgs).
func (c *collector) rawArgs(calls []*llm.ToolCallBlock) map[*llm.ToolCallBlock]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[*llm.ToolCallBlock]string
	for _, tc := range calls {
		if b := c.args[tc.ID]; b != nil && tc.ArgsError != "" {
			if out == nil {
				out = make(map[*llm.ToolCallBlock]string)
			}
			out[tc] = b.String()
		}
	}
	return out
}
