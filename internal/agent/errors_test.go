package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

// failFirst fails its first call with err before any output and passes the
// later ones to inner, recording every request.
type failFirst struct {
	inner llm.Provider
	err   error
	mu    sync.Mutex
	reqs  []*llm.Request
}

func (f *failFirst) Name() string { return "scripted" }

func (f *failFirst) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	if n == 1 {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Stop: llm.StopError}, f.err
	}
	return f.inner.Stream(ctx, req, sink)
}

func TestProviderErrorBeforeOutput(t *testing.T) {
	// The scripted provider's 401 is what a real one reports.
	p401 := scripted.New(scripted.Config{Script: script(scripted.Step{
		Error: &scripted.Failure{Status: 401, Kind: "authentication_error", Message: "invalid x-api-key"},
	})})
	a := newAgent(t, p401, nil)
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "hello", nil, rec.emit)
	var ae *Error
	var le *llm.Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError || !errors.As(err, &le) || le.Status != 401 {
		t.Fatalf("err = %#v, want a provider_error *Error wrapping the 401", err)
	}
	const msg = "scripted: http 401 authentication_error: invalid x-api-key"
	if ae.Error() != msg {
		t.Errorf("message = %q, want %q", ae.Error(), msg)
	}
	wantTypes(t, rec.types(), "user_message", "turn_start", "turn_end")
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopError || te.Error != msg {
		t.Errorf("turn_end = %s", te.AppendJSON(nil))
	}
	if IsAborted(err) {
		t.Error("a provider error is not an abort")
	}
	if n := a.MessageCount(); n != 0 {
		t.Fatalf("the rejected prompt stayed in the transcript:\n%s", dump(a.Transcript()))
	}
	if u := a.Usage(); u != (wire.Usage{}) {
		t.Errorf("usage after a call that never started = %+v", u)
	}
}

func TestProviderErrorDoesNotPoisonNextPrompt(t *testing.T) {
	p := &failFirst{
		inner: scripted.New(scripted.Config{Script: &scripted.Script{Turns: []scripted.Turn{{Steps: []scripted.Step{{Echo: true}}}}}}),
		err:   &llm.Error{Provider: "scripted", Status: 400, Message: "image too large"},
	}
	a := newAgent(t, p, nil)
	if err := a.Prompt(context.Background(), "bad prompt", nil, nil); err == nil {
		t.Fatal("first prompt should fail")
	}
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "good prompt", nil, rec.emit); err != nil {
		t.Fatalf("second prompt: %v", err)
	}
	second := p.reqs[1]
	if roles(second.Messages) != "user" || second.Messages[0].Text() != "good prompt" {
		t.Errorf("second request carried:\n%s", dump(second.Messages))
	}
	if got := a.Transcript()[1].Text(); got != "You said: good prompt" {
		t.Errorf("answer = %q", got)
	}
	checkValid(t, a)
}

func TestMidStreamError(t *testing.T) {
	p := scripted.New(scripted.Config{Script: &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{{
			Thinking: "hmm",
			Text:     "This answer breaks off partway.",
			Error:    &scripted.Failure{AfterBytes: 12},
			Usage:    &llm.Usage{Input: 1000, Output: 50},
		}}},
		{Steps: []scripted.Step{{Echo: true}}},
	}}})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "answer", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError || !strings.Contains(ae.Error(), "overloaded_error") {
		t.Fatalf("err = %v", err)
	}
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "thinking_delta+", "text_delta+",
		"usage", "assistant_message", "turn_end")
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopError || te.Error != ae.Error() {
		t.Errorf("turn_end = %s", te.AppendJSON(nil))
	}
	// The input side of the failed call is billed.
	if u := eventsOf[*wire.UsageEvent](rec)[0]; u.Input != 1000 || u.Output != 0 {
		t.Errorf("usage = %s", u.AppendJSON(nil))
	}
	tr := a.Transcript()
	if roles(tr) != "user assistant" || len(tr[1].Content) != 1 || tr[1].Text() != "This answer " {
		t.Fatalf("transcript keeps more than the partial text:\n%s", dump(tr))
	}
	checkValid(t, a)
	if err := a.Prompt(context.Background(), "next", nil, nil); err != nil {
		t.Fatalf("next prompt: %v", err)
	}
	checkValid(t, a)
}

// TestErrorInSecondStep fails the call after a tool round: the earlier
// steps stay, the failed one adds nothing, and the transcript is valid.
func TestErrorInSecondStep(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{Text: "Looking.", ToolCalls: []scripted.ToolCall{{Name: "ls"}}},
		scripted.Step{Error: &scripted.Failure{Status: 500, Message: "boom"}},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(ls) })
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "look", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError {
		t.Fatalf("err = %v", err)
	}
	types := rec.types()
	if tail := strings.Join(types[len(types)-3:], " "); tail != "tool_result turn_start turn_end" {
		t.Errorf("tail = %s", tail)
	}
	if got := roles(a.Transcript()); got != "user assistant tool" {
		t.Errorf("roles = %q", got)
	}
	checkValid(t, a)
}

// TestErrorAfterToolCallStreamed ends a stream early after a complete tool call
// was received: the call never runs and does not stay in the transcript.
func TestErrorAfterToolCallStreamed(t *testing.T) {
	ls := &countingTool{name: "ls"}
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		sink(llm.Event{Kind: llm.EventStart})
		sink(llm.Event{Kind: llm.EventTextDelta, Text: "Checking."})
		sink(llm.Event{Kind: llm.EventToolStart, ToolID: "t1", ToolName: "ls"})
		sink(llm.Event{Kind: llm.EventToolArgsDelta, ToolID: "t1", Text: "{}"})
		sink(llm.Event{Kind: llm.EventToolEnd, ToolID: "t1"})
		return &llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				&llm.ThinkingBlock{Provider: "fake", Text: "partial"},
				&llm.TextBlock{Text: "Checking."},
				&llm.ToolCallBlock{ID: "t1", Name: "ls", Args: []byte("{}")},
			}},
			Stop: llm.StopError,
		}, &llm.Error{Provider: "fake", Kind: "stream_cut", Message: "stream ended before its end marker"}
	})
	a := newAgent(t, p, func(c *Config) { c.Tools = toolList(ls) })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "check", nil, rec.emit); err == nil {
		t.Fatal("want an error")
	}
	if len(ls.calls()) != 0 || len(eventsOf[*wire.ToolCallEvent](rec)) != 0 {
		t.Error("a call from a failed stream was reported or run")
	}
	tr := a.Transcript()
	if roles(tr) != "user assistant" || len(tr[1].Content) != 1 || tr[1].Text() != "Checking." {
		t.Fatalf("transcript:\n%s", dump(tr))
	}
	checkValid(t, a)
}

func TestProviderPanic(t *testing.T) {
	p := providerFunc(func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		panic("bad provider")
	})
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "x", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeInternal || !strings.Contains(ae.Error(), "bad provider") {
		t.Fatalf("err = %v", err)
	}
	if lastTurnEnd(t, rec).Stop != wire.StopError || a.MessageCount() != 0 {
		t.Errorf("stop = %s, messages = %d", lastTurnEnd(t, rec).Stop, a.MessageCount())
	}
}

func TestEmptyPrompt(t *testing.T) {
	a := newAgent(t, scripted.New(scripted.Config{}), nil)
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeInvalidParams || len(rec.events()) != 0 {
		t.Fatalf("err = %v, events = %v", err, rec.types())
	}
}

// TestReadersDuringPrompt reads the agent from other goroutines while
// prompts with tools run (for the race detector).
func TestReadersDuringPrompt(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(
		scripted.Step{Text: "one", Delay: time.Millisecond, ToolCalls: []scripted.ToolCall{{Name: "ls"}}},
		scripted.Step{Text: "two", Delay: time.Millisecond},
	)})
	a := newAgent(t, p, func(c *Config) { c.Tools = builtins(t.TempDir()) })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = a.Messages()
				_ = a.Transcript()
				_ = a.Usage()
				_ = a.Model()
				_ = a.MessageCount()
			}
		}()
	}
	for i := range 3 {
		if err := a.Prompt(context.Background(), "go", nil, nil); err != nil {
			t.Errorf("prompt %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	checkValid(t, a)
}
