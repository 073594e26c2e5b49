package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// withInterceptors makes a config edit that adds is to a new chain.
func withInterceptors(is ...Interceptor) func(*Config) {
	return func(c *Config) {
		c.Interceptors = new(Chain)
		for _, i := range is {
			c.Interceptors.Add(i)
		}
	}
}

func TestInterceptorBlocksTool(t *testing.T) {
	bash := &countingTool{name: "bash"}
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "bash", Args: `{"command":"rm -rf /"}`},
			{Name: "ls", Args: `{}`},
		}},
		scripted.Step{Text: "ok"},
	)})
	var seen []ToolCall
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(bash, ls)
		withInterceptors(Interceptor{BeforeTool: func(ctx context.Context, call ToolCall) Verdict {
			seen = append(seen, call)
			if call.Name == "bash" {
				return Verdict{Block: true, Reason: "destructive command"}
			}
			return Verdict{}
		}})(c)
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "clean up", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if len(bash.calls()) != 0 || len(ls.calls()) != 1 {
		t.Errorf("bash ran %d times, ls %d times", len(bash.calls()), len(ls.calls()))
	}
	if len(seen) != 2 || seen[0].Name != "bash" || string(seen[0].Args) != `{"command":"rm -rf /"}` || seen[0].ID == "" {
		t.Errorf("interceptor saw %+v", seen)
	}
	res := toolResults(rec)
	if !res[0].IsError || textOf(res[0].Content) != "the call was blocked and did not run: destructive command" {
		t.Errorf("blocked result = %s", res[0].AppendJSON(nil))
	}
	if res[1].IsError {
		t.Errorf("allowed result = %s", res[1].AppendJSON(nil))
	}
	checkValid(t, a)
}

func TestInterceptorRewritesArgs(t *testing.T) {
	dir := t.TempDir()
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "write", Args: `{"path":"wanted.txt","content":"hi"}`},
			{Name: "write", Args: `{"path":"second.txt","content":"hi"}`},
			{Name: "write", Args: `{"path":"third.txt","content":"hi"}`},
		}},
		scripted.Step{Text: "ok"},
	)})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = builtins(dir)
		withInterceptors(Interceptor{BeforeTool: func(ctx context.Context, call ToolCall) Verdict {
			var args map[string]any
			if err := json.Unmarshal(call.Args, &args); err != nil {
				t.Errorf("interceptor args: %v", err)
			}
			switch args["path"] {
			case "wanted.txt":
				return Verdict{Args: json.RawMessage(`{"path":"sandbox/wanted.txt","content":"hi"}`)}
			case "second.txt":
				return Verdict{Args: json.RawMessage(`["not", "an", "object"]`)}
			}
			// The tool would see the last path, an approver the first.
			return Verdict{Args: json.RawMessage(`{"path":"third.txt","content":"hi","path":"elsewhere.txt"}`)}
		}})(c)
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "write", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sandbox", "wanted.txt")); err != nil {
		t.Errorf("rewritten write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "wanted.txt")); !os.IsNotExist(err) {
		t.Errorf("the original path was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "second.txt")); !os.IsNotExist(err) {
		t.Errorf("a call with invalid rewritten args ran")
	}
	for _, name := range []string{"third.txt", "elsewhere.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("a call rewritten with a repeated name ran (%s)", name)
		}
	}
	res := toolResults(rec)
	if res[0].IsError || !res[1].IsError || !strings.Contains(textOf(res[1].Content), "not a JSON object") {
		t.Errorf("results = %s / %s", res[0].AppendJSON(nil), res[1].AppendJSON(nil))
	}
	if !res[2].IsError || !strings.Contains(textOf(res[2].Content), `field "path" twice`) {
		t.Errorf("third result = %s", res[2].AppendJSON(nil))
	}
	// The transcript keeps what the model wrote.
	if got := string(a.Transcript()[1].ToolCalls()[0].Args); got != `{"path":"wanted.txt","content":"hi"}` {
		t.Errorf("transcript args = %s", got)
	}
}

// TestInterceptorChainOrder: interceptors run by Order, then in the order
// they were added; rewritten arguments carry on down the chain; the first
// block wins and the rest are not asked.
func TestInterceptorChainOrder(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "ls", Args: `{"n":0}`}, {Name: "ls", Args: `{"n":9}`}}},
		scripted.Step{Text: "ok"},
	)})
	var mu sync.Mutex
	var trail []string
	note := func(s string) {
		mu.Lock()
		trail = append(trail, s)
		mu.Unlock()
	}
	bump := func(name string) Interceptor {
		return Interceptor{Name: name, BeforeTool: func(ctx context.Context, call ToolCall) Verdict {
			note(name + ":" + string(call.Args))
			var args struct{ N int }
			_ = json.Unmarshal(call.Args, &args)
			if args.N >= 9 {
				return Verdict{Block: true, Reason: name + " says no"}
			}
			b, _ := json.Marshal(map[string]int{"n": args.N + 1})
			return Verdict{Args: b}
		}}
	}
	last := bump("last")
	last.Order = OrderApproval
	chain := new(Chain)
	chain.Add(last)
	chain.Add(bump("first"))
	removeMe := chain.Add(bump("removed"))
	chain.Add(bump("second"))
	removeMe()
	removeMe() // twice is harmless
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		c.Interceptors = chain
	})
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	want := `first:{"n":0} second:{"n":1} last:{"n":2} first:{"n":9}`
	if got := strings.Join(trail, " "); got != want {
		t.Errorf("trail = %s, want %s", got, want)
	}
	got := ls.calls()
	if len(got) != 1 || got[0] != `{"n":3}` {
		t.Errorf("ls ran with %q", got)
	}
	if res := toolResults(rec); !res[1].IsError || !strings.Contains(textOf(res[1].Content), "first says no") {
		t.Errorf("second result = %s", res[1].AppendJSON(nil))
	}
}

// TestInterceptorTimeout: an interceptor that does not answer in time is
// ignored (fail-open) unless it asked to fail closed; an interceptor that
// reports an error is treated the same way.
func TestInterceptorTimeout(t *testing.T) {
	slow := func(ctx context.Context, call ToolCall) Verdict {
		<-ctx.Done() // never answers; returns when its deadline passes
		return Verdict{Block: true, Reason: "too late to count"}
	}
	broken := func(ctx context.Context, call ToolCall) Verdict {
		return Verdict{Block: true, Err: errors.New("extension crashed")}
	}
	cases := []struct {
		name      string
		i         Interceptor
		ran       bool
		resultHas string
	}{
		{"open", Interceptor{Name: "slow", Timeout: 20 * time.Millisecond, BeforeTool: slow}, true, ""},
		{"closed", Interceptor{Name: "slow", Timeout: 20 * time.Millisecond, FailClosed: true, BeforeTool: slow}, false, "slow: no answer within 20ms"},
		{"error open", Interceptor{Name: "broken", BeforeTool: broken}, true, ""},
		{"error closed", Interceptor{Name: "broken", FailClosed: true, BeforeTool: broken}, false, "broken: extension crashed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := &countingTool{name: "ls"}
			p := scripted.New(scripted.Config{Script: script(
				scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "ls"}}},
				scripted.Step{Text: "ok"},
			)})
			a := newAgent(t, p, func(c *Config) {
				c.Tools = toolList(ls)
				withInterceptors(tc.i)(c)
			})
			rec := newRecorder(t)
			if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			if ran := len(ls.calls()) == 1; ran != tc.ran {
				t.Errorf("ran = %v, want %v", ran, tc.ran)
			}
			if tc.resultHas != "" {
				if got := textOf(toolResults(rec)[0].Content); !strings.Contains(got, tc.resultHas) {
					t.Errorf("result %q lacks %q", got, tc.resultHas)
				}
			}
		})
	}
}

func TestInterceptorBlocksFirstTurn(t *testing.T) {
	called := false
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		called = true
		return answer(sink, "x", llm.Usage{}), nil
	})
	a := newAgent(t, p, withInterceptors(Interceptor{BeforeTurn: func(ctx context.Context, step int) Verdict {
		return Verdict{Block: true, Reason: "outside working hours"}
	}}))
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "hi", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeBlocked || ae.Error() != "turn blocked: outside working hours" {
		t.Fatalf("err = %v", err)
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopError || te.Error != "turn blocked: outside working hours" {
		t.Errorf("turn_end = %s", te.AppendJSON(nil))
	}
	if called || a.MessageCount() != 0 {
		t.Errorf("provider called = %v, messages = %d", called, a.MessageCount())
	}
}

func TestInterceptorBlocksLaterTurn(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{{Name: "ls"}}},
		scripted.Step{Text: "never"},
	)})
	var steps []int
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		withInterceptors(Interceptor{BeforeTurn: func(ctx context.Context, step int) Verdict {
			steps = append(steps, step)
			if step == 2 {
				return Verdict{Block: true, Reason: "budget used up"}
			}
			return Verdict{}
		}})(c)
	})
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "go", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeBlocked || ae.Message != "turn blocked: budget used up" {
		t.Fatalf("err = %v", err)
	}
	types := rec.types()
	if tail := strings.Join(types[len(types)-3:], " "); tail != "tool_result turn_start turn_end" {
		t.Errorf("tail = %s", tail)
	}
	if len(steps) != 2 || steps[0] != 1 || steps[1] != 2 {
		t.Errorf("steps = %v", steps)
	}
	if got := roles(a.Transcript()); got != "user assistant tool" {
		t.Errorf("roles = %q", got)
	}
	checkValid(t, a)
}

// TestInterceptorReplacesShownText: clients are shown the replaced text,
// each interceptor sees the previous one's output, and the transcript keeps
// what the model wrote.
func TestInterceptorReplacesShownText(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(scripted.Step{Text: "the key is sk-123"})})
	redacted := "the key is [redacted]"
	var secondSaw string
	a := newAgent(t, p, withInterceptors(
		Interceptor{AfterMessage: func(ctx context.Context, msg *llm.Message) Verdict {
			if strings.Contains(msg.Text(), "sk-") {
				return Verdict{Text: &redacted}
			}
			return Verdict{}
		}},
		Interceptor{AfterMessage: func(ctx context.Context, msg *llm.Message) Verdict {
			secondSaw = msg.Text()
			return Verdict{}
		}},
	))
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "key?", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if got := textOf(eventsOf[*wire.AssistantMessageEvent](rec)[0].Content); got != redacted {
		t.Errorf("assistant_message = %q", got)
	}
	if secondSaw != redacted {
		t.Errorf("the second interceptor saw %q", secondSaw)
	}
	if got := a.Transcript()[1].Text(); got != "the key is sk-123" {
		t.Errorf("transcript = %q, want the model's own text", got)
	}
}

func TestInterceptorBlocksAssistantMessage(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		Text: "running ls", ToolCalls: []scripted.ToolCall{{Name: "ls"}},
	})})
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		withInterceptors(Interceptor{AfterMessage: func(ctx context.Context, msg *llm.Message) Verdict {
			return Verdict{Block: true, Reason: "policy"}
		}})(c)
	})
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "ls", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeBlocked || ae.Error() != "assistant message blocked: policy" {
		t.Fatalf("err = %v", err)
	}
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "text_delta+",
		"tool_use_start", "tool_use_end", "usage", "turn_end")
	if len(ls.calls()) != 0 || a.MessageCount() != 0 {
		t.Errorf("ls ran %d times; %d messages kept", len(ls.calls()), a.MessageCount())
	}
}

// TestInterceptorCancelledMeansAbort: a BeforeTool interceptor interrupted
// by an abort never counts as "allow".
func TestInterceptorCancelledMeansAbort(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		ToolCalls: []scripted.ToolCall{{Name: "ls"}, {Name: "ls"}},
	})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := newAgent(t, p, func(c *Config) {
		c.Tools = toolList(ls)
		withInterceptors(Interceptor{BeforeTool: func(ctx context.Context, call ToolCall) Verdict {
			cancel()
			return Verdict{}
		}})(c)
	})
	rec := newRecorder(t)
	checkAborted(t, a.Prompt(ctx, "ls", nil, rec.emit))
	if len(ls.calls()) != 0 {
		t.Errorf("ls ran %d times", len(ls.calls()))
	}
	res := toolResults(rec)
	if len(res) != 2 || !res[0].IsError || !res[1].IsError {
		t.Fatalf("results = %v", rec.types())
	}
	if lastTurnEnd(t, rec).Stop != wire.StopAborted {
		t.Errorf("stop = %s", lastTurnEnd(t, rec).Stop)
	}
	checkValid(t, a)
}

// TestToolSetChangesBetweenSteps: a tool added while a prompt runs is
// offered from the next model call on, and one source's tools never shadow
// a built-in or an earlier source.
func TestToolSetChangesBetweenSteps(t *testing.T) {
	ls := &countingTool{name: "ls"}
	extra := &countingTool{name: "weather"}
	shadow := &countingTool{name: "ls"}
	var conflicts []string
	set, err := NewToolSet(toolList(ls), func(name, kept, dropped string) {
		conflicts = append(conflicts, name+":"+kept+">"+dropped)
	})
	if err != nil {
		t.Fatal(err)
	}
	var offered [][]string
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		var names []string
		for _, s := range req.Tools {
			names = append(names, s.Name)
		}
		offered = append(offered, names)
		if len(offered) == 1 {
			// A source joins while the first step runs.
			set.Set("ext:weather", []tools.Tool{extra, shadow})
			sink(llm.Event{Kind: llm.EventStart})
			return &llm.Response{Message: llm.Message{Content: []llm.Block{&llm.ToolCallBlock{ID: "c1", Name: "weather", Args: json.RawMessage(`{}`)}}}, Stop: llm.StopToolUse}, nil
		}
		if len(offered) == 2 {
			sink(llm.Event{Kind: llm.EventStart})
			return &llm.Response{Message: llm.Message{Content: []llm.Block{&llm.ToolCallBlock{ID: "c2", Name: "weather", Args: json.RawMessage(`{}`)}}}, Stop: llm.StopToolUse}, nil
		}
		return answer(sink, "done", llm.Usage{}), nil
	})
	a := newAgent(t, p, func(c *Config) { c.ToolSet = set })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "go", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if got := strings.Join(offered[0], ","); got != "ls" {
		t.Errorf("step 1 offered %s", got)
	}
	if got := strings.Join(offered[1], ","); got != "ls,weather" {
		t.Errorf("step 2 offered %s", got)
	}
	res := toolResults(rec)
	// The first step's call ran against the first step's set: unknown.
	if !res[0].IsError || !strings.Contains(textOf(res[0].Content), `unknown tool "weather"`) {
		t.Errorf("step 1 result = %s", res[0].AppendJSON(nil))
	}
	if res[1].IsError || len(extra.calls()) != 1 {
		t.Errorf("step 2 result = %s, weather ran %d times", res[1].AppendJSON(nil), len(extra.calls()))
	}
	if len(conflicts) == 0 || conflicts[0] != "ls:builtin>ext:weather" {
		t.Errorf("conflicts = %v", conflicts)
	}
	set.Remove("ext:weather")
	if got := set.View().Names(); got != "ls" {
		t.Errorf("after Remove: %s", got)
	}
}

// TestBeforePromptGateJoinsFirstTurn: what a prompt's gate adds to the
// chain (an extension that started meanwhile) is asked from step 1 on.
func TestBeforePromptGateJoinsFirstTurn(t *testing.T) {
	called := false
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		called = true
		return answer(sink, "x", llm.Usage{}), nil
	})
	var chain *Chain
	var order []string
	a := newAgent(t, p, withInterceptors(Interceptor{Order: -10, BeforePrompt: func(ctx context.Context) {
		order = append(order, "gate")
		chain.Add(Interceptor{FailClosed: true, BeforeTurn: func(ctx context.Context, step int) Verdict {
			order = append(order, fmt.Sprintf("guard %d", step))
			return Verdict{Block: true, Reason: "guarded"}
		}})
	}}))
	chain = a.Interceptors()
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "hi", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeBlocked || ae.Message != "turn blocked: guarded" {
		t.Fatalf("err = %v", err)
	}
	if called {
		t.Error("the model was called although the guard blocks step 1")
	}
	if got := strings.Join(order, ", "); got != "gate, guard 1" {
		t.Errorf("order = %s", got)
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
}

// TestBeforePromptAbort: a prompt aborted while its gate waits ends with
// turn_start and turn_end aborted, as one aborted before its first model
// call, and never reaches the model.
func TestBeforePromptAbort(t *testing.T) {
	called := false
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		called = true
		return answer(sink, "x", llm.Usage{}), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	a := newAgent(t, p, withInterceptors(Interceptor{BeforePrompt: func(gctx context.Context) {
		cancel()
		<-gctx.Done()
	}}))
	rec := newRecorder(t)
	err := a.Prompt(ctx, "hi", nil, rec.emit)
	if !IsAborted(err) {
		t.Fatalf("err = %v", err)
	}
	if called {
		t.Error("the model was called")
	}
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopAborted {
		t.Errorf("turn_end = %s", te.AppendJSON(nil))
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
}
