package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

// TestStepsAsPrompt drives a prompt's steps with RunStep, RunCall and
// ResultsMessage, each effect on a new agent holding the transcript as it
// stood (as a durable executor's activities do on any worker), and
// checks that the events are Prompt's, in Prompt's order, and that the
// transcripts end the same.
func TestStepsAsPrompt(t *testing.T) {
	s := script(
		scripted.Step{Text: "looking", ToolCalls: []scripted.ToolCall{{Name: "count", Args: `{"n":1}`}, {Name: "fly", Args: `{}`}}},
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "count", Args: `{"n":2}`}}},
		scripted.Step{Text: "done"},
	)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	mk := func(msgs []llm.Message) (*Agent, *countingTool) {
		tool := &countingTool{name: "count"}
		a := newAgent(t, scripted.New(scripted.Config{Script: s}), func(c *Config) {
			c.Tools = toolList(tool)
			c.Now = func() time.Time { return at }
		})
		if msgs != nil {
			if err := a.SetTranscript(msgs); err != nil {
				t.Fatal(err)
			}
		}
		return a, tool
	}
	ctx := context.Background()

	want := newRecorder(t)
	ref, refTool := mk(nil)
	if err := ref.Prompt(ctx, "go", nil, want.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}

	got := newRecorder(t)
	a, _ := mk(nil)
	user := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "go"}}}
	idx := a.AppendUser(user)
	got.emit(&wire.UserMessageEvent{Content: wireBlocks(&user), Time: wireTime(at)})
	msgs := a.Transcript()
	var ran []string
	var meter models.MeterState
	for step := 1; ; step++ {
		a, _ := mk(msgs)
		a.SetMeter(meter)
		d, calls, err := a.RunStep(ctx, idx, step, DefaultMaxSteps, got.emit)
		if err != nil {
			t.Fatalf("RunStep %d: %v", step, err)
		}
		msgs, meter = a.Transcript(), a.Meter()
		if d.Action != ActionRunTools {
			break
		}
		var results []*llm.ToolResultBlock
		for _, c := range calls {
			w, tool := mk(nil)
			results = append(results, w.RunCall(ctx, c, got.emit))
			ran = append(ran, tool.calls()...)
		}
		msgs = append(msgs, ResultsMessage(results))
		if err := AfterTools(step, DefaultMaxSteps); err != nil {
			t.Fatalf("AfterTools: %v", err)
		}
	}
	lines := func(r *recorder) []string {
		var out []string
		for _, ev := range r.events() {
			out = append(out, string(ev.AppendJSON(nil)))
		}
		return out
	}
	if w, g := lines(want), lines(got); !slices.Equal(w, g) {
		t.Errorf("events differ:\nPrompt:\n%q\nsteps:\n%q", w, g)
	}
	if w, g := dump(ref.Transcript()), dump(msgs); w != g {
		t.Errorf("transcripts differ:\nPrompt:\n%s\nsteps:\n%s", w, g)
	}
	if w := refTool.calls(); !slices.Equal(w, ran) {
		t.Errorf("tool ran with %q, Prompt's with %q", ran, w)
	}
}

// TestGateAsPrompt: Gate runs the chain's BeforePrompt functions and
// emits nothing when they let the prompt go on; aborted while they wait,
// it ends the prompt with Prompt's events and error.
func TestGateAsPrompt(t *testing.T) {
	for _, abort := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var ran []string
		edit := func(c *Config) {
			c.Interceptors = new(Chain)
			c.Interceptors.Add(Interceptor{Name: "ready", BeforePrompt: func(context.Context) {
				ran = append(ran, "prompt")
				if abort {
					cancel()
				}
			}})
			c.Interceptors.Add(Interceptor{Name: "guard", BeforeTurn: func(context.Context, int) Verdict {
				ran = append(ran, "turn")
				return Verdict{}
			}})
		}
		want := newRecorder(t)
		wantErr := newAgent(t, scripted.New(scripted.Config{Script: script(scripted.Step{Text: "hi"})}), edit).Prompt(ctx, "go", nil, want.emit)
		cancel()
		ctx, cancel = context.WithCancel(context.Background())
		ran = nil
		got := newRecorder(t)
		err := newAgent(t, scripted.New(scripted.Config{Script: script(scripted.Step{Text: "hi"})}), edit).Gate(ctx, got.emit)
		cancel()
		if !slices.Equal(ran, []string{"prompt"}) {
			t.Errorf("abort=%v: Gate ran %v, want the BeforePrompt functions alone", abort, ran)
		}
		if !abort {
			if err != nil || len(got.events()) != 0 {
				t.Errorf("an open gate: %v and %v, want nothing", err, got.types())
			}
			continue
		}
		if !IsAborted(err) || !IsAborted(wantErr) {
			t.Errorf("Gate: %v, Prompt: %v; want both aborted", err, wantErr)
		}
		if w, g := want.types()[1:], got.types(); !slices.Equal(w, g) {
			t.Errorf("Gate emitted %v, Prompt %v after its user_message", g, w)
		}
	}
}
