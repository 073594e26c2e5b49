package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// TestMiddlewareThroughConfig: Config's middleware wraps the Runtime's
// model and tool calls: one times every model call and counts the deltas
// that pass, one replays a model answer it recorded, one refuses a tool
// call; they run in the order given.
func TestMiddlewareThroughConfig(t *testing.T) {
	var (
		mu    sync.Mutex
		trace []string
	)
	note := func(format string, args ...any) {
		mu.Lock()
		trace = append(trace, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	timer := func(next ModelFunc) ModelFunc {
		return func(ctx context.Context, call ModelCall, sink ModelSink) (*ModelResponse, error) {
			start, deltas := time.Now(), 0
			resp, err := next(ctx, call, func(ev ModelEvent) {
				if ev.Kind == ModelEventTextDelta {
					deltas++
				}
				sink(ev)
			})
			if time.Since(start) <= 0 {
				t.Error("no time passed")
			}
			note("model %s %d: %d deltas, err %v", call.Kind, call.Step, deltas, err)
			return resp, err
		}
	}
	type kept struct {
		events []ModelEvent
		resp   ModelResponse
	}
	var last *kept
	replay := func(next ModelFunc) ModelFunc {
		return func(ctx context.Context, call ModelCall, sink ModelSink) (*ModelResponse, error) {
			if last != nil && strings.Contains(call.Request.Messages[len(call.Request.Messages)-1].Text(), "again") {
				for _, ev := range last.events {
					sink(ev)
				}
				resp := last.resp
				return &resp, nil
			}
			var evs []ModelEvent
			resp, err := next(ctx, call, func(ev ModelEvent) { evs = append(evs, ev); sink(ev) })
			if err == nil && call.Step == 2 {
				last = &kept{events: evs, resp: *resp}
			}
			return resp, err
		}
	}
	refuse := func(next ToolFunc) ToolFunc {
		return func(ctx context.Context, run ToolRun) (ToolResult, error) {
			if run.Name == "bash" {
				note("tool %s refused", run.Name)
				return ToolResult{}, errors.New("no shell here")
			}
			res, err := next(ctx, run)
			note("tool %s: error %v, text %v", run.Name, res.IsError, ToolResultText(res) != "")
			return res, err
		}
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[
		{"steps":[{"tool_calls":[{"name":"bash","args":{"command":"echo hi"}},{"name":"ls","args":{}}]},{"text":"the recorded answer","chunk":4}]},
		{"steps":[{"text":"not this"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Provider: "scripted", Script: script, CWD: dir,
		ModelMiddleware: []ModelMiddleware{timer, replay}, ToolMiddleware: []ToolMiddleware{refuse}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	prompt := func(text string) []Event {
		ch, err := rt.Prompt(context.Background(), text, nil)
		if err != nil {
			t.Fatal(err)
		}
		return drain(t, ch)
	}
	evs := prompt("run things")
	var results []string
	for _, ev := range evs {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			var b strings.Builder
			for _, c := range r.Content {
				if tb, ok := c.(*wire.TextBlock); ok {
					b.WriteString(tb.Text)
				}
			}
			results = append(results, fmt.Sprintf("%v %s", r.IsError, b.String()))
		}
	}
	if len(results) != 2 || results[0] != "true the bash tool failed: no shell here" || !strings.HasPrefix(results[1], "false ") {
		t.Errorf("tool results %q", results)
	}
	again := prompt("again, please")
	answer := func(evs []Event) string {
		var b strings.Builder
		for _, ev := range evs {
			if d, ok := ev.(*wire.TextDeltaEvent); ok {
				b.WriteString(d.Delta)
			}
		}
		return b.String()
	}
	if got := answer(again); got != "the recorded answer" {
		t.Errorf("the replayed answer streamed %q", got)
	}
	want := []string{
		"model turn 1: 0 deltas, err <nil>",
		"tool bash refused",
		"tool ls: error false, text true",
		"model turn 2: 5 deltas, err <nil>",
		"model turn 1: 5 deltas, err <nil>",
	}
	if !slices.Equal(trace, want) {
		t.Errorf("trace:\n got  %q\n want %q", trace, want)
	}
	msgs, err := rt.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; last.Role != wire.RoleAssistant {
		t.Errorf("last message %+v", last)
	}
}
