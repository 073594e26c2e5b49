package agent

import (
	"context"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// Prompt adds a user message (text, then images) to the transcript and
// runs the agent until the model stops, the step limit is reached, or ctx
// ends. It reports what happens to emit, which may be nil.
//
// The events, in order: user_message; then for each step (model call)
// turn_start{step}, assistant_start once the provider starts answering,
// the deltas (text_delta, thinking_delta, tool_use_start, tool_use_args,
// tool_use_end) as they stream, usage, assistant_message, one tool_call per
// call, and turn_end{stop}. When stop is tool_use the tools run next, one
// after another in order, each reporting tool_progress while it runs and
// then tool_result, and the next step follows. After the last step,
// automatic compaction may add usage and compact_done.
//
// Prompt returns nil when the model stopped (turn_end end_turn, length or
// refusal). A refusal (turn_end{stop:"refusal", reason}) removes the
// prompt's messages from the transcript again, as the vendors ask, so
// that the next prompt does not meet the same refusal. A step that the
// output limit ended with tool calls (turn_end{stop:"length"}) runs none
// of them: each gets an error tool_result, a call the limit cut saying so,
// so that the model can try again with smaller arguments. It returns an error satisfying IsAborted (and errors.Is with
// context.Canceled) when ctx ended; the events then end with
// turn_end{stop:"aborted"} wherever the abort landed: before the provider
// answered, while it streamed, while a tool ran (after the tool results:
// the running tool is cancelled, the calls after it get error results
// "aborted" and never run), or during automatic compaction. Any other
// failure is an *Error: a provider failure (code provider_error, after
// turn_end{stop:"error"}), the step limit (code max_steps, after the last
// step's tool results), a hook blocking a step (after turn_end{stop:
// "error"}) or an empty prompt (invalid_params, nothing emitted). The caller writes the error event (not for an abort)
// and the done event.
//
// A prompt that ends in failure or abort before any assistant message of
// it was kept removes its user message from the transcript again, so a
// prompt the provider rejected does not poison the ones after it; its
// user_message event has been emitted all the same.
func (a *Agent) Prompt(ctx context.Context, text string, images []llm.ImageBlock, emit func(wire.Event)) error {
	return a.prompt(ctx, text, images, "", emit)
}

// PromptEvent runs an event from outside as a prompt, as Prompt does; its
// message is marked as an event from source (user_message kind event).
func (a *Agent) PromptEvent(ctx context.Context, source, text string, emit func(wire.Event)) error {
	return a.prompt(ctx, text, nil, source, emit)
}

// prompt is Prompt; a source marks the message as an external event.
func (a *Agent) prompt(ctx context.Context, text string, images []llm.ImageBlock, source string, emit func(wire.Event)) error {
	if text == "" && len(images) == 0 {
		return &Error{Code: wire.CodeInvalidParams, Message: "empty prompt: give text or an image"}
	}
	msg := llm.Message{Role: llm.RoleUser, Time: a.timeNow()}
	note, told := a.note(a.Model().BoundThinking)
	if note != "" {
		msg.Content = append(msg.Content, &llm.TextBlock{Text: note})
		msg.Meta = map[string]string{MetaNote: "true"}
	}
	if text != "" {
		msg.Content = append(msg.Content, &llm.TextBlock{Text: text})
	}
	for i := range images {
		img := images[i]
		msg.Content = append(msg.Content, &img)
	}
	ev := &wire.UserMessageEvent{}
	if source != "" {
		if msg.Meta == nil {
			msg.Meta = map[string]string{}
		}
		msg.Meta[MetaKind], msg.Meta[MetaSource] = string(wire.UserMessageKindEvent), source
		ev.Kind, ev.Source = wire.UserMessageKindEvent, source
	}
	p := &promptRun{run: a.newRun(ctx, emit)}
	if a.inbox != nil {
		a.inbox.Open()
		defer a.inbox.stop()
	}
	a.startBudget(overridesOf(ctx))
	p.userIndex = a.appendMessage(msg)
	ev.Content, ev.Time = wireBlocks(&msg), wireTime(msg.Time)
	p.emit(ev)
	err := p.gate()
	if err == nil {
		err = p.loop()
	}
	if err != nil && !p.kept {
		a.truncate(p.userIndex)
		if note != "" {
			a.untold(told) // the note left with the message
		}
	}
	return err
}

// promptRun is one prompt in progress.
type promptRun struct {
	*run
	userIndex int  // where the prompt's user message is
	kept      bool // an assistant message of this prompt is in the transcript
	// overflowRetried is set once the prompt compacted and retried a call
	// the provider refused as too long; it is done at most once.
	overflowRetried bool
	// boundRetried is set once the prompt dropped thinking the provider
	// refused as bound to another conversation and sent again; done at
	// most once.
	boundRetried bool
	// contextFull is set when a step stopped at the context window: the
	// prompt then ends with a compaction, whatever the threshold.
	contextFull bool
	// view is the tool set of the prompt's first step, which every step
	// offers when the model binds its thinking to the tools (bound.go).
	view *ToolView
}

// gate runs the chain's BeforePrompt functions before anything of the
// prompt reaches the chain or the observers: what they add takes part
// from the first turn_start on. A prompt aborted while they wait ends as
// one aborted before its first model call: turn_start then turn_end
// aborted, whether or not the chain has a gate.
func (p *promptRun) gate() error {
	if p.a.chain.Len() == 0 {
		return nil
	}
	p.a.chain.beforePrompt(p.ctx)
	if p.ctx.Err() != nil {
		p.emit(&wire.TurnStartEvent{Step: 1})
		return p.abort()
	}
	return nil
}

// loop runs the steps of the prompt.
func (p *promptRun) loop() error {
	a := p.a
	for step := 1; ; step++ {
		p.deliver()
		p.emit(&wire.TurnStartEvent{Step: int64(step)})
		if why := p.spentBefore(step); why != "" {
			p.turnEndReason(wire.StopMaxCost, why)
			return p.finish(nil)
		}
		if err := p.beforeTurn(step); err != nil {
			return err
		}
		if p.ctx.Err() != nil {
			return p.abort()
		}
		res, err := p.call(step)
		if err != nil {
			return err
		}
		max := p.maxSteps()
		o := Outcome{Step: step, MaxSteps: max, Stop: res.stop, Reason: res.reason, Calls: len(res.calls), Empty: res.empty}
		if o.Calls > 0 && o.Stop == wire.StopEndTurn {
			o.OverBudget = a.overBudget(overridesOf(p.ctx))
		}
		switch d := Decide(o); d.Action {
		case ActionRefuse:
			p.turnEndReason(d.Stop, d.Reason)
			p.forget()
			return p.finish(nil)
		case ActionFail:
			// The prompt fails saying so (its user message is dropped
			// unless earlier steps were kept), and a context window that
			// filled is still compacted.
			p.turnEnd(d.Stop, d.Err.Message)
			if p.contextFull && !a.autoOff {
				if cerr := p.compactForOverflow(); IsAborted(cerr) {
					return cerr
				}
			}
			return d.Err
		case ActionEnd:
			p.turnEndReason(d.Stop, d.Reason)
			if a.inbox != nil && d.Steerable && !a.inbox.stopIfNoSteer() {
				continue // a steer came during the step: the model answers it
			}
			return p.finish(nil)
		case ActionAnswerUnrun:
			p.turnEndReason(d.Stop, d.Reason)
			p.answerUnrun(res.calls)
			return p.finish(nil)
		}
		p.turnEnd(wire.StopToolUse, "")
		p.runTools(res.calls, res.tools)
		if p.ctx.Err() != nil {
			return p.abort()
		}
		if err := AfterTools(step, max); err != nil {
			return p.finish(err)
		}
	}
}

// spentBefore says why the prompt's cost budget is spent before step's
// model call, "" while it is not. Only what the previous step's tools
// spent (sub-agents) can spend it there: a model call that spends it
// ends the prompt at once.
func (p *promptRun) spentBefore(step int) string {
	if step == 1 {
		return ""
	}
	return p.a.overBudget(overridesOf(p.ctx))
}

// beforeTurn runs the chain's BeforeTurn interceptors. When one blocks
// the step, or ctx ended meanwhile, the step ends here and the error is
// returned.
func (p *promptRun) beforeTurn(step int) error {
	if p.a.chain.Len() == 0 {
		return nil
	}
	v := p.a.chain.beforeTurn(p.ctx, step)
	if p.ctx.Err() != nil {
		return p.abort()
	}
	if !v.Block {
		return nil
	}
	e := &Error{Code: wire.CodeBlocked, Message: "turn blocked: " + blockReason(v.Reason)}
	p.turnEnd(wire.StopError, e.Message)
	return e
}

// finish runs automatic compaction after the prompt's last step, when it
// is due, and returns what the prompt returns: err, or the compaction's
// abort or failure when err is nil.
func (p *promptRun) finish(err error) error {
	cerr := p.autoCompact()
	switch {
	case cerr == nil:
		return err
	case IsAborted(cerr):
		return cerr
	case err != nil:
		return err
	}
	return cerr
}

// maxSteps is the step limit of the prompt: its override, else the
// agent's.
func (p *promptRun) maxSteps() int {
	if o := overridesOf(p.ctx); o != nil && o.MaxSteps > 0 {
		return o.MaxSteps
	}
	return p.a.maxSteps
}
