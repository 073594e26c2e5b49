package agent

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

func TestPromptTextOnly(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		Text:  "Hello there, friend.",
		Chunk: 6,
		Usage: &llm.Usage{Input: 100, Output: 10},
	})})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "hi", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "text_delta+", "usage",
		"assistant_message", "turn_end")
	deltas := eventsOf[*wire.TextDeltaEvent](rec)
	var text strings.Builder
	for _, d := range deltas {
		text.WriteString(d.Delta)
	}
	if len(deltas) < 2 || text.String() != "Hello there, friend." {
		t.Errorf("deltas = %d pieces making %q", len(deltas), text.String())
	}
	if got := lastTurnEnd(t, rec); got.Stop != wire.StopEndTurn || got.Error != "" {
		t.Errorf("turn_end = %+v, want end_turn", got)
	}
	if got := eventsOf[*wire.TurnStartEvent](rec)[0].Step; got != 1 {
		t.Errorf("step = %d, want 1", got)
	}
	msg := eventsOf[*wire.AssistantMessageEvent](rec)[0]
	if textOf(msg.Content) != "Hello there, friend." || msg.Time != "2026-11-23T10:00:02.000Z" {
		t.Errorf("assistant_message = %s", msg.AppendJSON(nil))
	}
	um := eventsOf[*wire.UserMessageEvent](rec)[0]
	if textOf(um.Content) != "hi" || um.Time != "2026-11-23T10:00:01.000Z" {
		t.Errorf("user_message = %s", um.AppendJSON(nil))
	}
	if got := roles(a.Transcript()); got != "user assistant" {
		t.Errorf("transcript roles = %q", got)
	}
	checkValid(t, a)
}

// TestPromptDefaultScript runs the scripted provider's built-in script with
// the real tools: a thinking, a bash call, its result and a second step.
func TestPromptDefaultScript(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, scripted.New(scripted.Config{}), func(c *Config) { c.Tools = builtins(dir) })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "show me", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	wantTypes(t, withoutProgress(rec.types()),
		"user_message",
		"turn_start", "assistant_start", "thinking_delta+", "text_delta+",
		"tool_use_start", "tool_use_args+", "tool_use_end", "usage", "assistant_message", "tool_call", "turn_end",
		"tool_result",
		"turn_start", "assistant_start", "text_delta+", "usage", "assistant_message", "turn_end")

	steps := eventsOf[*wire.TurnStartEvent](rec)
	if steps[0].Step != 1 || steps[1].Step != 2 {
		t.Errorf("steps = %d, %d", steps[0].Step, steps[1].Step)
	}
	ends := eventsOf[*wire.TurnEndEvent](rec)
	if ends[0].Stop != wire.StopToolUse || ends[1].Stop != wire.StopEndTurn {
		t.Errorf("stops = %s, %s", ends[0].Stop, ends[1].Stop)
	}
	call := eventsOf[*wire.ToolCallEvent](rec)[0]
	if call.Name != "bash" || string(call.Args) != `{"command":"`+scripted.DefaultCommand+`"}` {
		t.Errorf("tool_call = %s", call.AppendJSON(nil))
	}
	res := toolResults(rec)[0]
	if res.ID != call.ID || res.IsError || !strings.Contains(textOf(res.Content), "hello from zot") ||
		!strings.Contains(textOf(res.Content), "marker.txt") {
		t.Errorf("tool_result = %s", res.AppendJSON(nil))
	}
	// Progress, if any, belongs to the call and comes before its result.
	sawResult := false
	for _, ev := range rec.events() {
		switch ev := ev.(type) {
		case *wire.ToolResultEvent:
			sawResult = true
		case *wire.ToolProgressEvent:
			if sawResult || ev.ID != call.ID {
				t.Errorf("stray progress %s", ev.AppendJSON(nil))
			}
		}
	}

	// Usage at the scripted model's made-up prices ($1 / $5 / $0.10 / $1.25).
	us := eventsOf[*wire.UsageEvent](rec)
	if len(us) != 2 {
		t.Fatalf("usage events = %d", len(us))
	}
	checkUsage(t, us[0], 1850, 96, 0, 1600, 0.00433, 0.00433)
	checkUsage(t, us[1], 240, 52, 1850, 0, 0.000685, 0.005015)
	if got := a.Usage(); got != us[1].Cumulative {
		t.Errorf("Usage() = %+v, want %+v", got, us[1].Cumulative)
	}

	if got := roles(a.Transcript()); got != "user assistant tool assistant" {
		t.Errorf("transcript roles = %q", got)
	}
	checkValid(t, a)

	// The second prompt is echoed and adds to the totals.
	rec2 := newRecorder(t)
	if err := a.Prompt(context.Background(), "again", nil, rec2.emit); err != nil {
		t.Fatalf("second Prompt: %v", err)
	}
	msg := eventsOf[*wire.AssistantMessageEvent](rec2)[0]
	if textOf(msg.Content) != "You said: again" {
		t.Errorf("second answer = %q", textOf(msg.Content))
	}
	u := eventsOf[*wire.UsageEvent](rec2)[0]
	checkUsage(t, u, 60, 24, 2100, 0, 0.00039, 0.005405)
	if a.MessageCount() != 6 {
		t.Errorf("MessageCount = %d, want 6", a.MessageCount())
	}
}

func checkUsage(t *testing.T, u *wire.UsageEvent, in, out, cr, cw int64, cost, cum float64) {
	t.Helper()
	if u.Input != in || u.Output != out || u.CacheRead != cr || u.CacheWrite != cw {
		t.Errorf("usage = %s, want %d/%d/%d/%d", u.AppendJSON(nil), in, out, cr, cw)
	}
	if math.Abs(u.CostUSD-cost) > 1e-12 || math.Abs(u.Cumulative.CostUSD-cum) > 1e-12 {
		t.Errorf("cost = %v (cumulative %v), want %v (%v)", u.CostUSD, u.Cumulative.CostUSD, cost, cum)
	}
}

func TestToolBatchRunsInOrder(t *testing.T) {
	dir := t.TempDir()
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "write", Args: `{"path":"a.txt","content":"first\n"}`},
			{Name: "read", Args: `{"path":"a.txt"}`},
			{Name: "bash", Args: `{"command":"cat a.txt; echo second >> a.txt"}`},
			{Name: "read", Args: `{"path":"a.txt"}`},
		}},
		scripted.Step{Text: "done"},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = builtins(dir) })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	wantTypes(t, withoutProgress(rec.types()),
		"user_message",
		"turn_start", "assistant_start",
		"tool_use_start", "tool_use_args+", "tool_use_end",
		"tool_use_start", "tool_use_args+", "tool_use_end",
		"tool_use_start", "tool_use_args+", "tool_use_end",
		"tool_use_start", "tool_use_args+", "tool_use_end",
		"usage", "assistant_message", "tool_call", "tool_call", "tool_call", "tool_call", "turn_end",
		"tool_result", "tool_result", "tool_result", "tool_result",
		"turn_start", "assistant_start", "text_delta+", "usage", "assistant_message", "turn_end")
	calls := eventsOf[*wire.ToolCallEvent](rec)
	results := toolResults(rec)
	for i := range calls {
		if results[i].ID != calls[i].ID || results[i].IsError {
			t.Errorf("result %d = %s for call %s", i, results[i].AppendJSON(nil), calls[i].ID)
		}
	}
	if !strings.Contains(textOf(results[1].Content), "first") || strings.Contains(textOf(results[1].Content), "second") {
		t.Errorf("read before bash saw %q", textOf(results[1].Content))
	}
	if !strings.Contains(textOf(results[3].Content), "second") {
		t.Errorf("read after bash saw %q", textOf(results[3].Content))
	}
	tr := a.Transcript()
	toolMsg := tr[2]
	if toolMsg.Role != llm.RoleTool || len(toolMsg.Content) != 4 {
		t.Fatalf("tool message = %s", dump(tr))
	}
	for i, b := range toolMsg.Content {
		if r := b.(*llm.ToolResultBlock); r.CallID != calls[i].ID || r.Name != calls[i].Name {
			t.Errorf("result %d in the transcript answers %s/%s", i, r.CallID, r.Name)
		}
	}
	checkValid(t, a)
}

func TestLengthStop(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(scripted.Step{Text: "cut", Stop: llm.StopLength})})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "long", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if got := lastTurnEnd(t, rec).Stop; got != wire.StopLength {
		t.Errorf("stop = %s, want length", got)
	}
}

func TestMaxSteps(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		ToolCalls: []scripted.ToolCall{{Name: "ls", Args: `{}`}},
	})})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(ls); c.MaxSteps = 2 })
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "loop", nil, rec.emit)
	var ae *Error
	if !asError(err, &ae) || ae.Code != wire.CodeMaxSteps || !strings.Contains(ae.Error(), "max steps (2)") {
		t.Fatalf("err = %v, want a max_steps *Error", err)
	}
	types := rec.types()
	wantTypes(t, types,
		"user_message",
		"turn_start", "assistant_start", "tool_use_start", "tool_use_args+", "tool_use_end", "usage", "assistant_message", "tool_call", "turn_end", "tool_result",
		"turn_start", "assistant_start", "tool_use_start", "tool_use_args+", "tool_use_end", "usage", "assistant_message", "tool_call", "turn_end", "tool_result")
	if n := len(ls.calls()); n != 2 {
		t.Errorf("ls ran %d times, want 2", n)
	}
	if got := roles(a.Transcript()); got != "user assistant tool assistant tool" {
		t.Errorf("roles = %q", got)
	}
	checkValid(t, a)
}

func TestInvalidToolArgs(t *testing.T) {
	write := &countingTool{name: "write"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "write", Args: `{"path": "x", oops`}}},
		scripted.Step{Text: "sorry"},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(write) })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "write it", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if n := len(write.calls()); n != 0 {
		t.Errorf("the tool ran %d times with invalid arguments", n)
	}
	call := eventsOf[*wire.ToolCallEvent](rec)[0]
	var s string
	if err := json.Unmarshal(call.Args, &s); err != nil || s != `{"path": "x", oops` {
		t.Errorf("tool_call args = %s, want the text as a JSON string", call.Args)
	}
	res := toolResults(rec)[0]
	if !res.IsError || !strings.Contains(textOf(res.Content), "not valid JSON") ||
		!strings.Contains(textOf(res.Content), "did not run") {
		t.Errorf("tool_result = %s", res.AppendJSON(nil))
	}
	// get_messages shows the same text.
	msgs := a.Messages()
	tc := msgs[1].Content[0].(*wire.ToolCallBlock)
	if string(tc.Args) != string(call.Args) {
		t.Errorf("transcript args = %s, event args = %s", tc.Args, call.Args)
	}
	// The provider is sent back valid JSON.
	if got := a.Transcript()[1].ToolCalls()[0].Args; string(got) != "{}" {
		t.Errorf("transcript call args = %s, want {}", got)
	}
	checkValid(t, a)
}

func TestUnknownTool(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "fly", Args: `{}`}}},
		scripted.Step{Text: "ok"},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = builtins(t.TempDir()) })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "fly", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	res := toolResults(rec)[0]
	if !res.IsError || !strings.Contains(textOf(res.Content), `unknown tool "fly"`) ||
		!strings.Contains(textOf(res.Content), "bash, edit, find, grep, ls, read, write") {
		t.Errorf("tool_result = %s", res.AppendJSON(nil))
	}
}

// TestRepeatedArgNames: arguments that give a name twice, at any depth, do
// not run: encoding/json would keep the last value while the tool_call
// event shows both, so the call shown would not be the call run. The model
// is told which field and asked to call again.
func TestRepeatedArgNames(t *testing.T) {
	write := &countingTool{name: "write"}
	args := []string{
		`{"path":"a.txt","content":"x","path":"b.txt"}`,
		`{"path":"a.txt","edits":[{"old":"x","new":"y","new":"z"}]}`,
	}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "write", Args: args[0]}, {Name: "write", Args: args[1]}}},
		scripted.Step{Text: "sorry"},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(write) })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "write it", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if got := write.calls(); len(got) != 0 {
		t.Errorf("the tool ran with repeated names: %q", got)
	}
	for i, field := range []string{`"path"`, `"edits[0].new"`} {
		call := eventsOf[*wire.ToolCallEvent](rec)[i]
		var s string
		if err := json.Unmarshal(call.Args, &s); err != nil || s != args[i] {
			t.Errorf("tool_call args = %s, want the text as a JSON string", call.Args)
		}
		res := toolResults(rec)[i]
		if text := textOf(res.Content); !res.IsError || !strings.Contains(text, "did not run") ||
			!strings.Contains(text, "field "+field+" twice") || !strings.Contains(text, "Call the tool again") {
			t.Errorf("tool_result = %s", res.AppendJSON(nil))
		}
	}
	checkValid(t, a)
}
