package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// hangGuard bounds every wait in these tests; it only catches hangs.
const hangGuard = 60 * time.Second

// scriptedModel is the scripted provider's catalog model.
func scriptedModel() models.Model { return models.Builtin().Resolve("scripted", "scripted") }

// testClock is a clock that moves one second per reading.
func testClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// newAgent returns an agent on p with the scripted model, a test clock and
// a fixed system prompt; edit adjusts the config first.
func newAgent(t *testing.T, p llm.Provider, edit func(*Config)) *Agent {
	t.Helper()
	cfg := Config{
		Provider: p,
		Model:    scriptedModel(),
		System:   func() string { return "test system prompt" },
		Now:      testClock(),
	}
	if edit != nil {
		edit(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// script builds a one-turn script from steps.
func script(steps ...scripted.Step) *scripted.Script {
	return &scripted.Script{Turns: []scripted.Turn{{Steps: steps}}}
}

// recorder collects events and checks each against the wire schema.
type recorder struct {
	t  *testing.T
	mu sync.Mutex
	ev []wire.Event
	// on, when set, is called with each event after it is recorded.
	on func(wire.Event)
}

func newRecorder(t *testing.T) *recorder { return &recorder{t: t} }

func (r *recorder) emit(ev wire.Event) {
	r.mu.Lock()
	r.ev = append(r.ev, ev)
	n := len(r.ev)
	r.mu.Unlock()
	if ev.GetSeq() != 0 || !ev.GetPromptID().IsZero() {
		r.t.Errorf("event %s arrived with seq or prompt_id set", ev.Type())
	}
	// Stamp a copy the way a caller would, and validate the line.
	line := ev.AppendJSON(nil)
	stamped, err := wire.DecodeEvent(line)
	if err != nil {
		r.t.Errorf("event %d (%s) does not decode: %v: %s", n, ev.Type(), err, line)
	} else {
		stamped.SetSeq(int64(n))
		if err := wire.ValidateEvent(stamped.AppendJSON(nil)); err != nil {
			r.t.Errorf("event %d (%s) violates the schema: %v: %s", n, ev.Type(), err, line)
		}
	}
	if r.on != nil {
		r.on(ev)
	}
}

func (r *recorder) events() []wire.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ev)
}

// types returns the event types in order, with runs of the same streaming
// event (deltas, tool progress) collapsed into one entry marked "+".
func (r *recorder) types() []string {
	var out []string
	for _, ev := range r.events() {
		typ := ev.Type()
		switch typ {
		case wire.TypeTextDeltaEvent, wire.TypeThinkingDeltaEvent, wire.TypeToolUseArgsEvent, wire.TypeToolProgressEvent:
			typ += "+"
			if len(out) > 0 && out[len(out)-1] == typ {
				continue
			}
		}
		out = append(out, typ)
	}
	return out
}

// withoutProgress returns types without tool progress entries, whose
// presence depends on timing.
func withoutProgress(types []string) []string {
	return slices.DeleteFunc(slices.Clone(types), func(s string) bool { return s == "tool_progress+" })
}

func wantTypes(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("event types:\n got  %s\n want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// eventsOf returns the recorded events of type T.
func eventsOf[T wire.Event](r *recorder) []T {
	var out []T
	for _, ev := range r.events() {
		if v, ok := ev.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// lastTurnEnd returns the last turn_end event.
func lastTurnEnd(t *testing.T, r *recorder) *wire.TurnEndEvent {
	t.Helper()
	ends := eventsOf[*wire.TurnEndEvent](r)
	if len(ends) == 0 {
		t.Fatal("no turn_end event")
	}
	return ends[len(ends)-1]
}

// textOf concatenates the text blocks of wire content.
func textOf(blocks wire.ContentBlocks) string {
	var b strings.Builder
	for _, blk := range blocks {
		if t, ok := blk.(*wire.TextBlock); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// checkValid fails the test when the agent's transcript is not valid.
func checkValid(t *testing.T, a *Agent) {
	t.Helper()
	if err := Validate(a.Transcript()); err != nil {
		t.Fatalf("invalid transcript: %v\n%s", err, dump(a.Transcript()))
	}
}

// roles returns the roles of the transcript, joined by spaces.
func roles(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role))
	}
	return strings.Join(out, " ")
}

// dump renders a transcript for failure messages.
func dump(msgs []llm.Message) string {
	var b strings.Builder
	for i, m := range msgs {
		fmt.Fprintf(&b, "%d %s:", i, m.Role)
		for _, blk := range m.Content {
			switch blk := blk.(type) {
			case *llm.TextBlock:
				fmt.Fprintf(&b, " text(%q)", blk.Text)
			case *llm.ThinkingBlock:
				fmt.Fprintf(&b, " thinking")
			case *llm.ImageBlock:
				fmt.Fprintf(&b, " image(%d)", len(blk.Data))
			case *llm.ToolCallBlock:
				fmt.Fprintf(&b, " call(%s %s %s)", blk.ID, blk.Name, blk.Args)
			case *llm.ToolResultBlock:
				fmt.Fprintf(&b, " result(%s err=%v)", blk.CallID, blk.IsError)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// providerFunc is an llm.Provider made of a function.
type providerFunc func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error)

func (providerFunc) Name() string { return "fake" }

func (f providerFunc) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	return f(ctx, req, sink)
}

// answer returns a complete text response, streamed as one delta.
func answer(sink llm.Sink, text string, u llm.Usage) *llm.Response {
	sink(llm.Event{Kind: llm.EventStart})
	sink(llm.Event{Kind: llm.EventTextDelta, Text: text})
	return &llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: text}}},
		Stop:    llm.StopEndTurn,
		Usage:   u,
	}
}

// isSummaryRequest reports whether req is a compaction call.
func isSummaryRequest(req *llm.Request) bool {
	if len(req.Tools) > 0 || len(req.Messages) != 1 {
		return false
	}
	text := req.Messages[0].Text()
	return strings.Contains(text, "<conversation>") || strings.Contains(text, "<summaries>")
}

// countingTool is a tool that records its calls.
type countingTool struct {
	name string
	mu   sync.Mutex
	args []string
}

func (c *countingTool) Name() string            { return c.name }
func (c *countingTool) Description() string     { return "Count calls. Test only." }
func (c *countingTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (c *countingTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.args = append(c.args, string(call.Args))
	return tools.Text(fmt.Sprintf("%s ran with %s", c.name, call.Args)), nil
}

func (c *countingTool) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.args)
}

// builtins returns the built-in tools working in dir.
func builtins(dir string) []tools.Tool {
	return tools.Builtins(tools.Config{CWD: dir, SpillDir: dir, Env: []string{"PATH=/usr/bin:/bin"}})
}

// toolResults returns the tool_result events.
func toolResults(r *recorder) []*wire.ToolResultEvent { return eventsOf[*wire.ToolResultEvent](r) }

// toolList returns ts as a tool list.
func toolList(ts ...tools.Tool) []tools.Tool { return ts }

// asError is errors.As for *Error.
func asError(err error, target **Error) bool { return errors.As(err, target) }

// cancelTool cancels the prompt's context when it runs and succeeds.
type cancelTool struct{ cancel context.CancelFunc }

func (*cancelTool) Name() string            { return "stop" }
func (*cancelTool) Description() string     { return "Cancel the prompt. Test only." }
func (*cancelTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (c *cancelTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	c.cancel()
	return tools.Text("cancelled"), nil
}
