package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/outputschema"
	"zot.dev/zot/sdk/wire"
)

// tally adds up a prompt's events into the result record its done
// carries. The session's emitMu guards it: deliver feeds it every event
// of the job under that lock.
type tally struct {
	start      time.Time
	turns      int64
	toolCalls  int64
	usage      wire.Usage
	text       string
	stop       wire.StopReason
	failed     bool
	structured json.RawMessage
	children   int        // sub-agents started (subagents.go)
	childUsage wire.Usage // what they spent (subagents.go)
}

// addUsage adds u to the usage of the prompt's sub-agents. The caller
// holds the session's emitMu.
func (t *tally) addChildUsage(u wire.Usage) {
	addUsage(&t.childUsage, u)
}

// addUsage adds u to sum.
func addUsage(sum *wire.Usage, u wire.Usage) {
	sum.Input += u.Input
	sum.Output += u.Output
	sum.CacheRead += u.CacheRead
	sum.CacheWrite += u.CacheWrite
	sum.CostUSD += u.CostUSD
	if u.CostUnknown != nil && *u.CostUnknown {
		unknown := true
		sum.CostUnknown = &unknown
	}
}

// addChild counts a sub-agent the prompt starts, unless it has started
// max already. It takes the session's emitMu, which guards the tally.
func (t *tally) addChild(s *Session, max int) bool {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if t.children >= max {
		return false
	}
	t.children++
	return true
}

// see counts one event of the prompt.
func (t *tally) see(ev wire.Event) {
	switch e := ev.(type) {
	case *wire.TurnStartEvent:
		if e.Attempt == nil { // a step made again is the same turn
			t.turns++
		}
	case *wire.ToolCallEvent:
		t.toolCalls++
	case *wire.UsageEvent:
		addUsage(&t.usage, wire.Usage{Input: e.Input, Output: e.Output, CacheRead: e.CacheRead, CacheWrite: e.CacheWrite, CostUSD: e.CostUSD, CostUnknown: e.CostUnknown})
	case *wire.AssistantMessageEvent:
		t.text = textOf(e.Content)
	case *wire.TurnEndEvent:
		t.stop = e.Stop
	case *wire.ErrorEvent:
		t.failed = true
	}
}

// result is the record of the prompt, now that it ends.
func (t *tally) result() *wire.PromptResult {
	stop := t.stop
	if t.failed || stop == "" {
		stop = wire.StopError
	}
	r := &wire.PromptResult{
		Stop:       stop,
		Text:       t.text,
		Turns:      t.turns,
		ToolCalls:  t.toolCalls,
		DurationMs: time.Since(t.start).Milliseconds(),
		Usage:      t.usage,
		Structured: t.structured,
	}
	if t.children > 0 {
		n, cu := int64(t.children), t.childUsage
		addUsage(&r.Usage, cu)
		r.Children, r.ChildrenUsage = &n, &cu
	}
	return r
}

// textOf joins the text blocks of an assistant message.
func textOf(blocks wire.ContentBlocks) string {
	var b strings.Builder
	for _, c := range blocks {
		if tb, ok := c.(*wire.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}

// lastAnswer returns how the prompt's last model call ended and its text.
func (s *Session) lastAnswer(t *tally) (wire.StopReason, string) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	return t.stop, t.text
}

// promptStructured runs a prompt whose final answer must follow out: the
// agent asks the model for it, the answer is checked, and one that does
// not follow gets a corrective turn, up to retries of them. The parsed
// value goes on the prompt's result; an answer that never follows ends
// the prompt with code invalid_output.
func (s *Session) promptStructured(ctx context.Context, t *tally, in PromptInput, emit func(wire.Event)) error {
	ctx = agent.WithOutputSchema(ctx, in.Output)
	err := s.agent.Prompt(ctx, in.Text, in.Images, emit)
	for try := 0; ; try++ {
		if err != nil {
			return err
		}
		stop, text := s.lastAnswer(t)
		if stop != wire.StopEndTurn {
			return nil // cut by the output limit, or refused: nothing to parse
		}
		v, problem := in.Output.Check(text)
		if problem == nil {
			s.emitMu.Lock()
			t.structured = v
			s.emitMu.Unlock()
			return nil
		}
		if try >= in.OutputRetries {
			return &agent.Error{Code: wire.CodeInvalidOutput, Message: fmt.Sprintf("zot: the final answer does not follow output_schema after %d corrective turns: %v", try, problem)}
		}
		err = s.agent.Prompt(ctx, outputschema.Corrective(problem), nil, emit)
	}
}

// errBadOutputSchema wraps a schema the prompt gave that cannot be used.
func errBadOutputSchema(err error) error {
	return &agent.Error{Code: wire.CodeInvalidParams, Message: err.Error()}
}

// tallyKey keys the running prompt's tally in its context.
type tallyKey struct{}

// tallyOf returns the tally of the prompt running under ctx. The work of
// a prompt always runs with one (see runJob); a lone one stands in
// otherwise so that nothing fails for want of it.
func tallyOf(ctx context.Context) *tally {
	if t, ok := ctx.Value(tallyKey{}).(*tally); ok {
		return t
	}
	return &tally{}
}

// SetOutput sets the schema the prompt's final answer must follow, and
// its corrective turns (nil: outputschema.DefaultRetries), as a door
// received them. An empty schema sets nothing. A schema that is not one,
// or a count out of range, is an invalid_params error.
func (in *PromptInput) SetOutput(schema json.RawMessage, retries *int64) error {
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	out, err := outputschema.Compile(schema)
	if err != nil {
		return errBadOutputSchema(err)
	}
	n := outputschema.DefaultRetries
	if retries != nil {
		if *retries < 0 || *retries > outputschema.MaxRetries {
			return errBadOutputSchema(fmt.Errorf("output_retries must be from 0 to %d", outputschema.MaxRetries))
		}
		n = int(*retries)
	}
	in.Output, in.OutputRetries = out, n
	return nil
}
