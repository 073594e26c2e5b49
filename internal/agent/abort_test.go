package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

// checkAborted fails unless err reports an abort in every way callers test
// for it.
func checkAborted(t *testing.T, err error) {
	t.Helper()
	if !IsAborted(err) || !errors.Is(err, context.Canceled) || !errors.Is(err, ErrAborted) {
		t.Fatalf("err = %v, want an abort matching context.Canceled", err)
	}
	var ae *Error
	if errors.As(err, &ae) {
		t.Fatalf("an abort must not be an *Error (it would get an error event): %v", err)
	}
}

func TestAbortBeforeHeaders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	p := providerFunc(func(c context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		calls++
		if calls == 1 {
			// Waiting for response headers that never come.
			cancel()
			<-c.Done()
			return nil, c.Err()
		}
		return answer(sink, "fine", llm.Usage{Input: 5, Output: 1}), nil
	})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	err := a.Prompt(ctx, "never answered", nil, rec.emit)
	checkAborted(t, err)
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopAborted || te.Error != "context canceled" {
		t.Errorf("turn_end = %s", te.AppendJSON(nil))
	}
	if n := a.MessageCount(); n != 0 {
		t.Errorf("an aborted prompt with no answer left %d messages:\n%s", n, dump(a.Transcript()))
	}
	// The next prompt works.
	rec2 := newRecorder(t)
	if err := a.Prompt(context.Background(), "hello", nil, rec2.emit); err != nil {
		t.Fatalf("next Prompt: %v", err)
	}
	if got := roles(a.Transcript()); got != "user assistant" {
		t.Errorf("roles = %q", got)
	}
}

func TestAbortBeforePrompt(t *testing.T) {
	called := false
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		called = true
		return nil, ctx.Err()
	})
	a := newAgent(t, p, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := newRecorder(t)
	checkAborted(t, a.Prompt(ctx, "too late", nil, rec.emit))
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
	if lastTurnEnd(t, rec).Stop != wire.StopAborted || called {
		t.Errorf("stop = %s, provider called = %v", lastTurnEnd(t, rec).Stop, called)
	}
}

func TestAbortCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("user pressed stop")
	p := providerFunc(func(c context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		cancel(why)
		<-c.Done()
		return nil, c.Err()
	})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	err := a.Prompt(ctx, "x", nil, rec.emit)
	checkAborted(t, err)
	if !errors.Is(err, why) || lastTurnEnd(t, rec).Error != "user pressed stop" {
		t.Errorf("err = %v, turn_end error = %q", err, lastTurnEnd(t, rec).Error)
	}
}

func TestAbortMidStream(t *testing.T) {
	p := scripted.New(scripted.Config{Script: &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{{Text: strings.Repeat("streaming text ", 50), Chunk: 5, Delay: 2 * time.Millisecond}}},
		{Steps: []scripted.Step{{Echo: true}}},
	}}})
	a := newAgent(t, p, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder(t)
	deltas := 0
	rec.on = func(ev wire.Event) {
		if ev.Type() == wire.TypeTextDeltaEvent {
			if deltas++; deltas == 3 {
				cancel()
			}
		}
	}
	err := a.Prompt(ctx, "talk", nil, rec.emit)
	checkAborted(t, err)
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "text_delta+", "usage", "assistant_message", "turn_end")
	if lastTurnEnd(t, rec).Stop != wire.StopAborted {
		t.Errorf("stop = %s", lastTurnEnd(t, rec).Stop)
	}
	var streamed strings.Builder
	for _, d := range eventsOf[*wire.TextDeltaEvent](rec) {
		streamed.WriteString(d.Delta)
	}
	tr := a.Transcript()
	if roles(tr) != "user assistant" || tr[1].Text() != streamed.String() {
		t.Fatalf("transcript after the abort:\n%s\nstreamed %q", dump(tr), streamed.String())
	}
	if got := textOf(eventsOf[*wire.AssistantMessageEvent](rec)[0].Content); got != streamed.String() {
		t.Errorf("assistant_message = %q, streamed %q", got, streamed.String())
	}
	checkValid(t, a)

	rec2 := newRecorder(t)
	if err := a.Prompt(context.Background(), "again", nil, rec2.emit); err != nil {
		t.Fatalf("next Prompt: %v", err)
	}
	if got := a.Transcript()[3].Text(); got != "You said: again" {
		t.Errorf("next answer = %q", got)
	}
	checkValid(t, a)
}

// TestAbortWhileToolCallStreams aborts while a tool call's arguments stream:
// the partial message keeps its text and loses the unfinished (and the
// finished) calls, which never ran.
func TestAbortWhileToolCallStreams(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(scripted.Step{
		Text:  "Let me look.",
		Chunk: 4,
		Delay: time.Millisecond,
		ToolCalls: []scripted.ToolCall{
			{Name: "ls", Args: `{}`},
			{Name: "ls", Args: `{"path":"` + strings.Repeat("a", 400) + `"}`},
		},
	})})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(ls) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder(t)
	starts := 0
	rec.on = func(ev wire.Event) {
		if ev.Type() == wire.TypeToolUseStartEvent {
			if starts++; starts == 2 {
				cancel()
			}
		}
	}
	checkAborted(t, a.Prompt(ctx, "look", nil, rec.emit))
	types := rec.types()
	if n := len(types); n < 4 || types[n-3] != "usage" || types[n-2] != "assistant_message" || types[n-1] != "turn_end" {
		t.Fatalf("types = %v", types)
	}
	if len(eventsOf[*wire.ToolCallEvent](rec)) != 0 || len(ls.calls()) != 0 {
		t.Errorf("tool calls reported or run after an abort")
	}
	tr := a.Transcript()
	if roles(tr) != "user assistant" || len(tr[1].ToolCalls()) != 0 || tr[1].Text() != "Let me look." {
		t.Fatalf("transcript:\n%s", dump(tr))
	}
	checkValid(t, a)
}

func TestAbortMidTool(t *testing.T) {
	dir := t.TempDir()
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{ToolCalls: []scripted.ToolCall{
			{Name: "bash", Args: `{"command":"sleep 300 & echo pid=$!; wait"}`},
			{Name: "write", Args: `{"path":"after.txt","content":"must not exist"}`},
		}},
		scripted.Step{Text: "never asked"},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = builtins(dir) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder(t)
	var progress strings.Builder
	rec.on = func(ev wire.Event) {
		if pe, ok := ev.(*wire.ToolProgressEvent); ok {
			progress.WriteString(pe.Text)
			if strings.Contains(progress.String(), "\n") {
				cancel()
			}
		}
	}
	done := make(chan error, 1)
	go func() { done <- a.Prompt(ctx, "sleep", nil, rec.emit) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(hangGuard):
		t.Fatal("the prompt did not end after the abort")
	}
	checkAborted(t, err)
	wantTypes(t, rec.types(),
		"user_message",
		"turn_start", "assistant_start",
		"tool_use_start", "tool_use_args+", "tool_use_end",
		"tool_use_start", "tool_use_args+", "tool_use_end",
		"usage", "assistant_message", "tool_call", "tool_call", "turn_end",
		"tool_progress+", "tool_result", "tool_result", "turn_end")
	ends := eventsOf[*wire.TurnEndEvent](rec)
	if ends[0].Stop != wire.StopToolUse || ends[1].Stop != wire.StopAborted {
		t.Errorf("stops = %s, %s", ends[0].Stop, ends[1].Stop)
	}
	res := toolResults(rec)
	if !res[0].IsError || !strings.Contains(textOf(res[0].Content), "aborted") {
		t.Errorf("bash result = %s", res[0].AppendJSON(nil))
	}
	if !res[1].IsError || !strings.HasPrefix(textOf(res[1].Content), "aborted") {
		t.Errorf("write result = %s", res[1].AppendJSON(nil))
	}
	if _, err := os.Stat(filepath.Join(dir, "after.txt")); !os.IsNotExist(err) {
		t.Errorf("the write after the aborted bash ran: stat err = %v", err)
	}
	// The background sleep went with its process group.
	line := progress.String()
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(strings.SplitN(line, "\n", 2)[0], "pid=")))
	if err != nil {
		t.Fatalf("no pid in progress %q", line)
	}
	deadline := time.Now().Add(hangGuard)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("sleep (pid %d) still runs after the abort", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tr := a.Transcript()
	if roles(tr) != "user assistant tool" || len(tr[2].Content) != 2 {
		t.Fatalf("transcript:\n%s", dump(tr))
	}
	checkValid(t, a)
}

// TestAbortAfterLastTool aborts while the last tool of a batch runs: the
// step still ends with turn_end aborted and no further model call is made.
func TestAbortAfterLastTool(t *testing.T) {
	calls := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := providerFunc(func(c context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		calls++
		sink(llm.Event{Kind: llm.EventStart})
		return &llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolCallBlock{ID: "c1", Name: "stop", Args: []byte(`{}`)}}},
			Stop:    llm.StopToolUse,
		}, nil
	})
	stop := &cancelTool{cancel: cancel}
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(stop) })
	rec := newRecorder(t)
	checkAborted(t, a.Prompt(ctx, "x", nil, rec.emit))
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "usage", "assistant_message", "tool_call", "turn_end",
		"tool_result", "turn_end")
	if calls != 1 {
		t.Errorf("model calls = %d, want 1", calls)
	}
	checkValid(t, a)
}
