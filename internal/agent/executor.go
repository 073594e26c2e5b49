package agent

import (
	"context"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// The effects of a prompt's steps, for an executor that drives them
// itself instead of through Prompt (a durable workflow whose model calls
// and tool calls run as activities, each on an agent holding the
// transcript as it stood): RunStep makes one model call and carries out
// what Decide says needs no tool; RunCall runs one tool call;
// ResultsMessage keeps a step's results. The events are Prompt's, in
// Prompt's order, when the executor calls them as Prompt's loop does.

// RunStep makes step's model call on the transcript, as one step of
// Prompt's loop, for a prompt whose user message is at userIndex:
// turn_start, the call's events up to its tool_call events, and what
// Decide says follows, up to the step's turn_end (with ActionRefuse the
// prompt's messages are removed again, with ActionAnswerUnrun the calls
// are answered without running). With ActionRunTools the caller runs
// the calls (RunCall, ResultsMessage) and asks AfterTools what follows. A
// steer is not looked for: ActionEnd ends the prompt. The error is
// Prompt's, with the events Prompt emits before it.
func (a *Agent) RunStep(ctx context.Context, userIndex, step, maxSteps int, emit func(wire.Event)) (Decision, []*llm.ToolCallBlock, error) {
	p := &promptRun{run: a.newRun(ctx, emit), userIndex: userIndex, kept: a.MessageCount() > userIndex+1}
	p.emit(&wire.TurnStartEvent{Step: int64(step)})
	if why := p.spentBefore(step); why != "" {
		p.turnEndReason(wire.StopMaxCost, why)
		return Decision{Action: ActionEnd, Stop: wire.StopMaxCost, Reason: why}, nil, nil
	}
	if err := p.beforeTurn(step); err != nil {
		return Decision{}, nil, err
	}
	if ctx.Err() != nil {
		return Decision{}, nil, p.abort()
	}
	res, err := p.call(step)
	if err != nil {
		return Decision{}, nil, err
	}
	o := Outcome{Step: step, MaxSteps: maxSteps, Stop: res.stop, Reason: res.reason, Calls: len(res.calls), Empty: res.empty}
	if o.Calls > 0 && o.Stop == wire.StopEndTurn {
		o.OverBudget = a.overBudget(overridesOf(ctx))
	}
	d := Decide(o)
	switch d.Action {
	case ActionRefuse:
		p.turnEndReason(d.Stop, d.Reason)
		p.forget()
	case ActionFail:
		p.turnEnd(d.Stop, d.Err.Message)
		return d, nil, d.Err
	case ActionEnd, ActionAnswerUnrun:
		p.turnEndReason(d.Stop, d.Reason)
		if d.Action == ActionAnswerUnrun {
			p.answerUnrun(res.calls)
		}
	case ActionRunTools:
		p.turnEnd(wire.StopToolUse, "")
	}
	return d, res.calls, nil
}

// RunCall runs one tool call of a step as Prompt does (its arguments
// checked, the interceptors, the tool middleware), emitting its
// tool_progress and tool_result, and returns the result's block for
// ResultsMessage. Once ctx has ended the call does not run and is
// answered "aborted".
func (a *Agent) RunCall(ctx context.Context, c *llm.ToolCallBlock, emit func(wire.Event)) *llm.ToolResultBlock {
	p := &promptRun{run: a.newRun(ctx, emit)}
	var res tools.Result
	if ctx.Err() != nil {
		res = tools.Errorf(abortedText)
	} else {
		res = p.runTool(c, a.toolset.View())
	}
	return p.result(c, res).(*llm.ToolResultBlock)
}

// ResultsMessage is the tool message that keeps a step's results, in the
// calls' order, for the transcript the next step is made on. Its time is
// unset: SetTranscript gives it the time it is loaded at.
func ResultsMessage(results []*llm.ToolResultBlock) llm.Message {
	content := make([]llm.Block, len(results))
	for i, r := range results {
		content[i] = r
	}
	return llm.Message{Role: llm.RoleTool, Content: content}
}

// AppendUser adds a prompt's user message to the transcript and returns
// its index, without an event: the executor's caller reported it.
func (a *Agent) AppendUser(msg llm.Message) int {
	if msg.Time.IsZero() {
		msg.Time = a.timeNow()
	}
	return a.appendMessage(msg)
}

// Meter returns the running usage and cost of the agent's model calls,
// for an executor to carry to the agent that makes the next one.
func (a *Agent) Meter() models.MeterState { return a.meter.State() }

// SetMeter sets the running usage and cost, as Meter returned them.
func (a *Agent) SetMeter(s models.MeterState) { a.meter.Restore(s) }

// UserMessage is the message a prompt of text and images adds to the
// transcript (an event from source when source is set), with its
// user_message event, as Prompt makes them; a model with bound thinking
// gets no note in it.
func (a *Agent) UserMessage(text string, images []llm.ImageBlock, source string) (llm.Message, *wire.UserMessageEvent) {
	msg := llm.Message{Role: llm.RoleUser, Time: a.timeNow()}
	if text != "" {
		msg.Content = append(msg.Content, &llm.TextBlock{Text: text})
	}
	for i := range images {
		img := images[i]
		msg.Content = append(msg.Content, &img)
	}
	ev := &wire.UserMessageEvent{}
	if source != "" {
		msg.Meta = map[string]string{MetaKind: string(wire.UserMessageKindEvent), MetaSource: source}
		ev.Kind, ev.Source = wire.UserMessageKindEvent, source
	}
	ev.Content, ev.Time = wireBlocks(&msg), wireTime(msg.Time)
	return msg, ev
}

// Offer is what the next model call offers the model: the system prompt
// and the tools, for an executor whose model calls are made by an agent
// elsewhere that has the tools' descriptions but not the tools.
func (a *Agent) Offer() (system string, tools []llm.ToolSpec) {
	return a.systemFor(a.Model().BoundThinking), a.toolset.View().Specs()
}

// AbortedText is the result of a call that an abort kept from running.
const AbortedText = abortedText

// AnswerCall answers call c, which did not run or did not finish, with an
// error result saying text: its tool_result is emitted and its block
// returned for ResultsMessage.
func AnswerCall(c *llm.ToolCallBlock, text string, emit func(wire.Event)) *llm.ToolResultBlock {
	res := tools.Errorf(text)
	emit(&wire.ToolResultEvent{ID: c.ID, IsError: true, Content: resultBlocks(res.Content)})
	return &llm.ToolResultBlock{CallID: c.ID, Name: c.Name, IsError: true, Content: res.Content}
}

// Gate runs, for an executor whose steps run elsewhere, what Prompt runs
// in this process before the first step: the chain's BeforePrompt
// functions (extensions being ready), so that the first step offers
// what Prompt's would. (Each step's BeforeTurn functions are the
// executor's to run before its model call: RunStep runs those of the
// chain it is given.) Nil lets the prompt go on; an abort meanwhile ends
// it here with Prompt's events (turn_start, turn_end aborted) and error.
func (a *Agent) Gate(ctx context.Context, emit func(wire.Event)) error {
	p := &promptRun{run: a.newRun(ctx, emit)}
	return p.gate()
}
