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
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// TestModelMiddlewareTimesCalls: a middleware sees each model call's
// request, response, duration and error, while the stream's events still
// reach the prompt as they arrive (not after the call).
func TestModelMiddlewareTimesCalls(t *testing.T) {
	type seen struct {
		kind    ModelCallKind
		step    int
		took    time.Duration
		text    string
		err     error
		deltas  int
		reqMsgs int
	}
	var (
		mu    sync.Mutex
		calls []seen
	)
	timer := func(next ModelFunc) ModelFunc {
		return func(ctx context.Context, call ModelCall, sink llm.Sink) (*llm.Response, error) {
			start := time.Now()
			deltas := 0
			resp, err := next(ctx, call, func(ev llm.Event) {
				if ev.Kind == llm.EventTextDelta {
					deltas++
				}
				sink(ev)
			})
			s := seen{kind: call.Kind, step: call.Step, took: time.Since(start), err: err, deltas: deltas, reqMsgs: len(call.Request.Messages)}
			if resp != nil {
				s.text = resp.Message.Text()
			}
			mu.Lock()
			calls = append(calls, s)
			mu.Unlock()
			return resp, err
		}
	}
	tool := &countingTool{name: "count"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "count", Args: `{}`}}},
		scripted.Step{Text: "all counted", Chunk: 3, Delay: 20 * time.Millisecond},
	)})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(tool)
		c.ModelMiddleware = []ModelMiddleware{timer}
	})
	rec := newRecorder(t)
	// A delta must reach the prompt while the call is still under way:
	// the middleware has recorded nothing of the second call yet.
	streamedDuring := false
	rec.on = func(ev wire.Event) {
		if d, ok := ev.(*wire.TextDeltaEvent); ok && d.Delta != "" {
			mu.Lock()
			if len(calls) == 1 {
				streamedDuring = true
			}
			mu.Unlock()
		}
	}
	if err := a.Prompt(context.Background(), "count", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("the middleware saw %d calls, want 2", len(calls))
	}
	first, second := calls[0], calls[1]
	if first.kind != ModelCallTurn || first.step != 1 || second.step != 2 || first.reqMsgs != 1 || second.reqMsgs != 3 {
		t.Errorf("calls: %+v", calls)
	}
	if second.text != "all counted" || second.err != nil || second.deltas != 4 {
		t.Errorf("second call: text %q, err %v, %d deltas", second.text, second.err, second.deltas)
	}
	// Four deltas of 20 ms each.
	if second.took < 60*time.Millisecond {
		t.Errorf("second call took %v; its deltas alone wait 80ms", second.took)
	}
	if !streamedDuring {
		t.Error("no text delta reached the prompt while the call was under way")
	}
	if textOf(eventsOf[*wire.AssistantMessageEvent](rec)[1].Content) != "all counted" {
		t.Errorf("answer %v", rec.types())
	}
}

// cacheKey keys a request by its messages and tools.
func cacheKey(t *testing.T, req *llm.Request) string {
	b, err := json.Marshal(struct {
		M []llm.Message
		T []llm.ToolSpec
	}{req.Messages, req.Tools})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recorded is a model call kept by the caching middleware: its events and
// its response.
type recorded struct {
	events []llm.Event
	resp   *llm.Response
}

// TestModelMiddlewareCaches: a middleware that records a call's events
// and response and answers a repeated request by replaying them, without
// the provider; the prompt's events are the same as the real call's.
func TestModelMiddlewareCaches(t *testing.T) {
	providerCalls := 0
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		providerCalls++
		sink(llm.Event{Kind: llm.EventStart})
		sink(llm.Event{Kind: llm.EventThinkingDelta, Text: "hmm"})
		sink(llm.Event{Kind: llm.EventTextDelta, Text: "cached "})
		sink(llm.Event{Kind: llm.EventTextDelta, Text: "answer"})
		return &llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ThinkingBlock{Text: "hmm"}, &llm.TextBlock{Text: "cached answer"}}},
			Stop:    llm.StopEndTurn,
			Usage:   llm.Usage{Input: 10, Output: 3},
		}, nil
	})
	cache := map[string]recorded{}
	hits := 0
	cacher := func(next ModelFunc) ModelFunc {
		return func(ctx context.Context, call ModelCall, sink llm.Sink) (*llm.Response, error) {
			key := cacheKey(t, call.Request)
			if r, ok := cache[key]; ok {
				hits++
				for _, ev := range r.events {
					sink(ev)
				}
				resp := *r.resp
				return &resp, nil
			}
			var evs []llm.Event
			resp, err := next(ctx, call, func(ev llm.Event) {
				evs = append(evs, ev)
				sink(ev)
			})
			if err == nil {
				cache[key] = recorded{events: evs, resp: resp}
			}
			return resp, err
		}
	}
	run := func() []wire.Event {
		a := newAgent(t, p, func(c *Config) { c.ModelMiddleware = []ModelMiddleware{cacher} })
		rec := newRecorder(t)
		if err := a.Prompt(context.Background(), "same question", nil, rec.emit); err != nil {
			t.Fatal(err)
		}
		checkValid(t, a)
		if got := a.Transcript()[1].Text(); got != "cached answer" {
			t.Errorf("transcript answer %q", got)
		}
		return rec.events()
	}
	fresh := run()
	again := run()
	if providerCalls != 1 || hits != 1 {
		t.Fatalf("provider called %d times, cache hit %d times; want 1 and 1", providerCalls, hits)
	}
	lines := func(evs []wire.Event) string {
		var b strings.Builder
		for _, ev := range evs {
			b.Write(ev.AppendJSON(nil))
			b.WriteByte('\n')
		}
		return b.String()
	}
	if lines(fresh) != lines(again) {
		t.Errorf("a replayed call's events differ from the real call's:\nreal:\n%s\nreplayed:\n%s", lines(fresh), lines(again))
	}
}

// TestToolMiddlewareFailsACall: a tool middleware that refuses one tool
// answers its call with an error result without running it; the other
// tool runs, and the middleware sees its arguments and result.
func TestToolMiddlewareFailsACall(t *testing.T) {
	safe, risky := &countingTool{name: "safe"}, &countingTool{name: "risky"}
	var (
		mu      sync.Mutex
		results []string
	)
	deny := func(next ToolFunc) ToolFunc {
		return func(ctx context.Context, run ToolRun) (tools.Result, error) {
			if run.Name == "risky" {
				return tools.Result{}, errors.New("refused by policy")
			}
			res, err := next(ctx, run)
			mu.Lock()
			results = append(results, fmt.Sprintf("%s(%s) -> %s err=%v", run.Name, run.Args, textOfResult(res), err))
			mu.Unlock()
			return res, err
		}
	}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "risky", Args: `{"n":1}`},
			{Name: "safe", Args: `{"n":2}`},
		}},
		scripted.Step{Text: "done"},
	)})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(safe, risky)
		c.ToolMiddleware = []ToolMiddleware{deny}
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	res := toolResults(rec)
	if len(res) != 2 || !res[0].IsError || textOf(res[0].Content) != "the risky tool failed: refused by policy" || res[1].IsError {
		t.Fatalf("results: %+v", res)
	}
	if len(risky.calls()) != 0 || !slices.Equal(safe.calls(), []string{`{"n":2}`}) {
		t.Errorf("risky ran %v, safe ran %v", risky.calls(), safe.calls())
	}
	if want := []string{`safe({"n":2}) -> safe ran with {"n":2} err=<nil>`}; !slices.Equal(results, want) {
		t.Errorf("the middleware saw %q, want %q", results, want)
	}
	checkValid(t, a)
}

// textOfResult is the text of a tool result.
func textOfResult(r tools.Result) string {
	var b strings.Builder
	for _, blk := range r.Content {
		if t, ok := blk.(*llm.TextBlock); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestMiddlewareOrder: the first middleware of a chain is the outermost,
// for model calls and tool calls alike; a middleware's changed arguments
// reach the tool, and compaction's calls go through the model chain.
func TestMiddlewareOrder(t *testing.T) {
	var (
		mu  sync.Mutex
		log []string
	)
	note := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	model := func(name string) ModelMiddleware {
		return func(next ModelFunc) ModelFunc {
			return func(ctx context.Context, call ModelCall, sink llm.Sink) (*llm.Response, error) {
				note(fmt.Sprintf("%s>%s%d", name, call.Kind, call.Step))
				resp, err := next(ctx, call, sink)
				note(name + "<")
				return resp, err
			}
		}
	}
	tool := func(name string) ToolMiddleware {
		return func(next ToolFunc) ToolFunc {
			return func(ctx context.Context, run ToolRun) (tools.Result, error) {
				note(name + ">" + string(run.Args))
				changed := run
				changed.Args = json.RawMessage(strings.TrimSuffix(string(run.Args), "}") + `,"` + name + `":1}`)
				res, err := next(ctx, changed)
				note(name + "<")
				return res, err
			}
		}
	}
	count := &countingTool{name: "count"}
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		note("provider")
		if isSummaryRequest(req) {
			return answer(sink, "a summary", llm.Usage{Input: 5, Output: 2}), nil
		}
		if len(req.Messages) == 1 || len(req.Messages) == 5 {
			sink(llm.Event{Kind: llm.EventStart})
			return &llm.Response{
				Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolCallBlock{ID: "c1", Name: "count", Args: json.RawMessage(`{"n":1}`)}}},
				Stop:    llm.StopToolUse,
			}, nil
		}
		return answer(sink, "counted", llm.Usage{}), nil
	})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(count)
		c.KeepTail = 2
		c.ModelMiddleware = []ModelMiddleware{model("outer"), nil, model("inner")}
		c.ToolMiddleware = []ToolMiddleware{tool("outer"), tool("inner")}
	})
	if err := a.Prompt(context.Background(), "count", nil, newRecorder(t).emit); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"outer>turn1", "inner>turn1", "provider", "inner<", "outer<",
		`outer>{"n":1}`, `inner>{"n":1,"outer":1}`, "inner<", "outer<",
		"outer>turn2", "inner>turn2", "provider", "inner<", "outer<",
	}
	if !slices.Equal(log, want) {
		t.Errorf("order:\n got  %q\n want %q", log, want)
	}
	if got := count.calls(); !slices.Equal(got, []string{`{"n":1,"outer":1,"inner":1}`}) {
		t.Errorf("the tool ran with %q", got)
	}
	// A second prompt, then a compaction: its summarising call goes
	// through the chain too, as a compaction with no step.
	if err := a.Prompt(context.Background(), "more", nil, newRecorder(t).emit); err != nil {
		t.Fatal(err)
	}
	log = nil
	if err := a.Compact(context.Background(), "", newRecorder(t).emit); err != nil {
		t.Fatal(err)
	}
	if want := []string{"outer>compaction0", "inner>compaction0", "provider", "inner<", "outer<"}; !slices.Equal(log, want) {
		t.Errorf("compaction:\n got  %q\n want %q", log, want)
	}
}

// TestModelMiddlewarePanicIsAnError: a middleware that panics fails the
// step like a provider that panics; the prompt ends cleanly.
func TestModelMiddlewarePanicIsAnError(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(scripted.Step{Text: "never"})})
	a := newAgent(t, p, func(c *Config) {
		c.ModelMiddleware = []ModelMiddleware{func(ModelFunc) ModelFunc {
			return func(context.Context, ModelCall, llm.Sink) (*llm.Response, error) { panic("boom") }
		}}
	})
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "hi", nil, rec.emit)
	var e *Error
	if !asError(err, &e) || e.Code != wire.CodeInternal || !strings.Contains(e.Message, "boom") {
		t.Fatalf("err %v", err)
	}
	if end := lastTurnEnd(t, rec); end.Stop != wire.StopError {
		t.Errorf("turn_end %v", end.Stop)
	}
	checkValid(t, a)
}
