package scripted

import (
	"context"
	"fmt"
	"strings"
	"time"

	"zot.dev/zot/internal/llm"
)

// player streams one step to a sink and assembles the response.
type player struct {
	ctx   context.Context
	sleep func(context.Context, time.Duration) error
	sink  llm.Sink
	st    *Step
	pos   position
	req   *llm.Request
	chunk int

	text     string // the answer text to stream
	thinking strings.Builder
	answer   strings.Builder
	calls    []*llm.ToolCallBlock
}

func newPlayer(ctx context.Context, sleep func(context.Context, time.Duration) error, sink llm.Sink, st *Step, pos position, req *llm.Request) *player {
	pl := &player{ctx: ctx, sleep: sleep, sink: sink, st: st, pos: pos, req: req, chunk: st.Chunk, text: st.Text}
	if pl.chunk <= 0 {
		pl.chunk = defaultChunk
	}
	if st.Echo {
		pl.text = "You said: " + pos.prompt
	}
	return pl
}

// play streams the step: start, thinking, text, then tool calls, or a
// failure or cut partway through the text.
func (pl *player) play() (*llm.Response, error) {
	pl.sink(llm.Event{Kind: llm.EventStart})
	if err := pl.stream(llm.EventThinkingDelta, pl.st.Thinking, "", &pl.thinking); err != nil {
		return pl.partial(llm.StopAborted), err
	}
	limit, stopErr := pl.textLimit()
	if err := pl.stream(llm.EventTextDelta, prefix(pl.text, limit), "", &pl.answer); err != nil {
		return pl.partial(llm.StopAborted), err
	}
	if stopErr != nil {
		return pl.partial(llm.StopError), stopErr
	}
	for i, tc := range pl.st.ToolCalls {
		if err := pl.toolCall(i, tc); err != nil {
			return pl.partial(llm.StopAborted), err
		}
	}
	return pl.response(), nil
}

// textLimit returns how much of the text to stream, and the error that ends
// the stream after it, if the step fails mid-stream or is cut.
func (pl *player) textLimit() (int, error) {
	if f := pl.st.Error; f != nil && f.AfterBytes > 0 {
		return f.AfterBytes, midStreamError(f)
	}
	if pl.st.CutAfter > 0 {
		return pl.st.CutAfter, &llm.Error{
			Provider:  providerName,
			Kind:      "stream_cut",
			Message:   "stream ended before its end marker",
			Retryable: true,
		}
	}
	return len(pl.text), nil
}

// midStreamError is the error of f arriving as an event in the stream.
func midStreamError(f *Failure) error {
	kind := f.Kind
	if kind == "" {
		kind = "overloaded_error"
	}
	msg := f.Message
	if msg == "" {
		msg = fmt.Sprintf("scripted failure after %d bytes of text", f.AfterBytes)
	}
	e := &llm.Error{Provider: providerName, Kind: kind, Message: msg, RetryAfter: f.RetryAfter}
	switch kind {
	case "overloaded_error", "api_error", "rate_limit_error":
		e.Retryable = true
	}
	return e
}

// toolCall streams tool call i and records it once complete.
func (pl *player) toolCall(i int, tc ToolCall) error {
	id := tc.ID
	if id == "" {
		id = fmt.Sprintf("call_%d_%d_%d", pl.pos.turn, pl.pos.step, i)
	}
	pl.sink(llm.Event{Kind: llm.EventToolStart, ToolID: id, ToolName: tc.Name})
	var args strings.Builder
	if err := pl.stream(llm.EventToolArgsDelta, tc.Args, id, &args); err != nil {
		return err
	}
	pl.sink(llm.Event{Kind: llm.EventToolEnd, ToolID: id})
	parsed, argsErr := llm.ParseToolArgs([]byte(args.String()))
	pl.calls = append(pl.calls, &llm.ToolCallBlock{ID: id, Name: tc.Name, Args: parsed, ArgsError: argsErr})
	return nil
}

// stream reports s as deltas of kind, waiting the step's delay before each
// and stopping when ctx is done. What was reported is appended to out.
func (pl *player) stream(kind llm.EventKind, s, toolID string, out *strings.Builder) error {
	for s != "" {
		if err := pl.wait(); err != nil {
			return err
		}
		n := nextPiece(s, pl.chunk)
		out.WriteString(s[:n])
		pl.sink(llm.Event{Kind: kind, Text: s[:n], ToolID: toolID})
		s = s[n:]
	}
	return nil
}

// wait waits the step's delay, or checks ctx when there is none.
func (pl *player) wait() error {
	if pl.st.Delay > 0 {
		return pl.sleep(pl.ctx, pl.st.Delay)
	}
	return pl.ctx.Err()
}

// content assembles the message of what was streamed.
func (pl *player) content() llm.Message {
	msg := llm.Message{Role: llm.RoleAssistant}
	if pl.thinking.Len() > 0 {
		msg.Content = append(msg.Content, &llm.ThinkingBlock{Provider: providerName, Text: pl.thinking.String()})
	}
	if pl.answer.Len() > 0 {
		msg.Content = append(msg.Content, &llm.TextBlock{Text: pl.answer.String()})
	}
	for _, c := range pl.calls {
		msg.Content = append(msg.Content, c)
	}
	return msg
}

// response is the complete response of the step.
func (pl *player) response() *llm.Response {
	stop := pl.st.Stop
	if stop == "" {
		stop = llm.StopEndTurn
		if len(pl.calls) > 0 {
			stop = llm.StopToolUse
		}
	}
	u := estimate(pl.req, pl.st, pl.text)
	if pl.st.Usage != nil {
		u = *pl.st.Usage
	}
	return &llm.Response{Message: pl.content(), Stop: stop, Usage: u}
}

// partial is the response of a call that ended early: what was streamed,
// with the input side of the usage only, as a real stream reports it first.
func (pl *player) partial(stop llm.StopReason) *llm.Response {
	u := estimate(pl.req, pl.st, pl.text)
	if pl.st.Usage != nil {
		u = *pl.st.Usage
	}
	u.Output = 0
	return &llm.Response{Message: pl.content(), Stop: stop, Usage: u}
}
