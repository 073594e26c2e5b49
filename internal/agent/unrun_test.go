package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// canned answers each call with the next of its responses (the last one
// again once they run out), reporting a start and its text, and records
// the requests.
type canned struct {
	mu    sync.Mutex
	resps []*llm.Response
	reqs  []*llm.Request
}

func (c *canned) Name() string { return "scripted" }

func (c *canned) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	r := c.resps[min(len(c.reqs), len(c.resps))-1]
	c.mu.Unlock()
	sink(llm.Event{Kind: llm.EventStart})
	if t := r.Message.Text(); t != "" {
		sink(llm.Event{Kind: llm.EventTextDelta, Text: t})
	}
	out := *r
	out.Message.Role = llm.RoleAssistant
	return &out, nil
}

func TestRefusalEndsThePromptAndLeavesNoTrace(t *testing.T) {
	p := &canned{resps: []*llm.Response{{
		Message: llm.Message{Content: []llm.Block{&llm.TextBlock{Text: "Here is how"}}},
		Stop:    llm.StopRefusal, Reason: "This request was declined\nbecause it could enable cyber harm.",
		Usage: llm.Usage{Input: 10, Output: 3},
	}}}
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "do it", nil, rec.emit); err != nil {
		t.Fatalf("a refusal is an outcome, not an error: %v", err)
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "assistant_start", "text_delta+", "usage", "turn_end")
	te := lastTurnEnd(t, rec)
	if te.Stop != wire.StopRefusal || te.Reason != "This request was declined because it could enable cyber harm." || te.Error != "" {
		t.Fatalf("turn_end = %s", te.AppendJSON(nil))
	}
	if n := a.MessageCount(); n != 0 {
		t.Fatalf("transcript after a refusal: %s", dump(a.Transcript()))
	}
}

func TestRefusalAfterToolStepsForgetsThePrompt(t *testing.T) {
	p := &canned{resps: []*llm.Response{
		{Message: llm.Message{Content: []llm.Block{&llm.ToolCallBlock{ID: "c1", Name: "echo", Args: json.RawMessage(`{}`)}}}, Stop: llm.StopToolUse},
		{Stop: llm.StopRefusal, Reason: "SAFETY"},
	}}
	a := newAgent(t, p, func(c *Config) { c.Tools = []tools.Tool{echoTool{}} })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "first", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopRefusal || te.Reason != "SAFETY" || a.MessageCount() != 0 {
		t.Fatalf("turn_end %s, transcript %s", te.AppendJSON(nil), dump(a.Transcript()))
	}
}

func TestCutToolCallIsAnsweredNotRun(t *testing.T) {
	cut := &llm.ToolCallBlock{ID: "c2", Name: "echo"}
	cut.MarkCut("max_tokens")
	p := &canned{resps: []*llm.Response{{
		Message: llm.Message{Content: []llm.Block{
			&llm.TextBlock{Text: "Writing."},
			&llm.ToolCallBlock{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"complete"}`)},
			cut,
		}},
		Stop: llm.StopLength, Reason: llm.CutReason,
	}}}
	ran := 0
	a := newAgent(t, p, func(c *Config) { c.Tools = []tools.Tool{echoTool{ran: &ran}} })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "write", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "assistant_start", "text_delta+", "usage",
		"assistant_message", "tool_call", "tool_call", "turn_end", "tool_result", "tool_result")
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopLength || te.Reason != llm.CutReason {
		t.Fatalf("turn_end = %s", te.AppendJSON(nil))
	}
	results := eventsOf[*wire.ToolResultEvent](rec)
	if ran != 0 || !results[0].IsError || !results[1].IsError ||
		!strings.Contains(textOf(results[0].Content), "none of its calls ran") ||
		!strings.Contains(textOf(results[1].Content), "cut off by the output limit (max_tokens)") {
		t.Fatalf("ran %d, results %s / %s", ran, results[0].AppendJSON(nil), results[1].AppendJSON(nil))
	}
	checkValid(t, a)
	if got := roles(a.Transcript()); got != "user assistant tool" {
		t.Fatalf("transcript roles %q", got)
	}
	// The next prompt carries the cut call and its result to the model.
	p.resps = []*llm.Response{{Message: llm.Message{Content: []llm.Block{&llm.TextBlock{Text: "Smaller then."}}}, Stop: llm.StopEndTurn}}
	if err := a.Prompt(context.Background(), "again", nil, newRecorder(t).emit); err != nil {
		t.Fatal(err)
	}
	if got := roles(p.reqs[1].Messages); got != "user assistant tool user" {
		t.Fatalf("second request roles %q", got)
	}
}

func TestRequestCarriesCatalogCapabilities(t *testing.T) {
	p := &canned{resps: []*llm.Response{{Message: llm.Message{Content: []llm.Block{&llm.TextBlock{Text: "ok"}}}, Stop: llm.StopEndTurn}}}
	a := newAgent(t, p, func(c *Config) {
		c.Model.ReasoningControl, c.Model.AlwaysReasons, c.Model.NoChatToolsReasoning = llm.ReasoningEffort, true, true
	})
	if err := a.Prompt(context.Background(), "hi", nil, nil); err != nil {
		t.Fatal(err)
	}
	r := p.reqs[0]
	if r.ReasoningControl != llm.ReasoningEffort || !r.AlwaysReasons || !r.NoChatToolsReasoning || r.MaxOutput != scriptedModel().MaxOutput || !r.ReasoningModel {
		t.Fatalf("request %+v", r)
	}
}

// echoTool answers with its arguments and counts its runs.
type echoTool struct{ ran *int }

func (echoTool) Name() string        { return "echo" }
func (echoTool) Description() string { return "Echo the arguments." }
func (echoTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
}
func (e echoTool) Run(ctx context.Context, c tools.Call) (tools.Result, error) {
	if e.ran != nil {
		*e.ran++
	}
	return tools.Result{Content: []llm.Block{&llm.TextBlock{Text: string(c.Args)}}}, nil
}

// TestLengthWithCallsAlwaysSaysWhy: a provider that ends a step with tool
// calls at the output limit without a reason of its own (Gemini) still gets
// a turn_end that says why the calls did not run.
func TestLengthWithCallsAlwaysSaysWhy(t *testing.T) {
	p := &canned{resps: []*llm.Response{{
		Message: llm.Message{Content: []llm.Block{
			&llm.ToolCallBlock{ID: "c1", Name: "echo", Args: json.RawMessage(`{"text":"x"}`)},
		}},
		Stop: llm.StopLength,
	}}}
	ran := 0
	a := newAgent(t, p, func(c *Config) { c.Tools = []tools.Tool{echoTool{ran: &ran}} })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "write", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopLength || te.Reason != lengthWithCallsReason || ran != 0 {
		t.Fatalf("turn_end = %s, ran %d", te.AppendJSON(nil), ran)
	}
}

// The transcript's version stays the same while messages are appended
// and changes when a refusal drops the prompt, and on Clear and
// SetTranscript: a session file's save relies on it.
func TestTranscriptVersionChangesOnlyWhenNotAppended(t *testing.T) {
	p := &canned{resps: []*llm.Response{
		{Message: llm.Message{Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}, Stop: llm.StopEndTurn},
		{Stop: llm.StopRefusal, Reason: "no"},
	}}
	a := newAgent(t, p, nil)
	version := func() uint64 { _, gen := a.TranscriptView(); return gen }
	v0 := version()
	if err := a.Prompt(context.Background(), "first", nil, newRecorder(t).emit); err != nil {
		t.Fatal(err)
	}
	if msgs, v := a.TranscriptView(); v != v0 || len(msgs) != 2 {
		t.Fatalf("after an answered prompt: version %d (was %d), %d messages", v, v0, len(msgs))
	}
	p.resps = p.resps[1:] // the next call is refused: the prompt is dropped
	p.reqs = nil
	if err := a.Prompt(context.Background(), "second", nil, newRecorder(t).emit); err != nil {
		t.Fatal(err)
	}
	v1 := version()
	if v1 == v0 {
		t.Fatal("dropping the refused prompt kept the version")
	}
	if err := a.SetTranscript(a.Transcript()); err != nil {
		t.Fatal(err)
	}
	v2 := version()
	if v2 == v1 {
		t.Fatal("SetTranscript kept the version")
	}
	if err := a.Clear(); err != nil {
		t.Fatal(err)
	}
	if version() == v2 {
		t.Fatal("Clear kept the version")
	}
}
