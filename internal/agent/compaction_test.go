package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/internal/compact"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

// summaryProvider echoes prompts (with promptUsage) and answers compaction
// calls with summarise, recording the compaction requests.
type summaryProvider struct {
	promptUsage func(text string) llm.Usage
	summarise   func(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error)

	mu        sync.Mutex
	summaries []*llm.Request
	prompts   []*llm.Request
}

func (s *summaryProvider) Name() string { return "fake" }

func (s *summaryProvider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	s.mu.Lock()
	if isSummaryRequest(req) {
		s.summaries = append(s.summaries, req)
		s.mu.Unlock()
		if s.summarise != nil {
			return s.summarise(ctx, req, sink)
		}
		return answer(sink, "SUMMARY", llm.Usage{Input: 500, Output: 40}), nil
	}
	s.prompts = append(s.prompts, req)
	s.mu.Unlock()
	text := req.Messages[len(req.Messages)-1].Text()
	u := llm.Usage{Input: 10, Output: 2}
	if s.promptUsage != nil {
		u = s.promptUsage(text)
	}
	return answer(sink, "echo: "+text, u), nil
}

// promptN runs prompts "p1".."pN".
func promptN(t *testing.T, a *Agent, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if err := a.Prompt(context.Background(), "p"+string(rune('0'+i)), nil, nil); err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
	}
}

func TestCompactManual(t *testing.T) {
	sp := &summaryProvider{}
	a := newAgent(t, sp, nil)
	promptN(t, a, 4)
	before := a.Usage()
	rec := newRecorder(t)
	if err := a.Compact(context.Background(), "focus on p2", rec.emit); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	wantTypes(t, rec.types(), "usage", "compact_done")
	cd := eventsOf[*wire.CompactDoneEvent](rec)[0]
	if cd.Summary != "SUMMARY" || *cd.MessagesBefore != 8 || *cd.MessagesAfter != 5 {
		t.Errorf("compact_done = %s", cd.AppendJSON(nil))
	}
	// The summarising call saw the older part and the instructions only.
	req := sp.summaries[0]
	text := req.Messages[0].Text()
	if len(req.Tools) != 0 || !strings.Contains(text, "focus on p2") || !strings.Contains(text, "echo: p2") ||
		strings.Contains(text, "echo: p3") {
		t.Errorf("summary request:\n%s", text)
	}
	// Its usage counts: 500 input and 40 output at $1/$5 per million.
	u := eventsOf[*wire.UsageEvent](rec)[0]
	if u.Input != 500 || u.Output != 40 || u.Cumulative.Input != before.Input+500 || a.Usage() != u.Cumulative {
		t.Errorf("usage = %s, before %+v", u.AppendJSON(nil), before)
	}
	tr := a.Transcript()
	if roles(tr) != "user user assistant user assistant" || !compact.IsSummary(&tr[0]) ||
		!strings.Contains(tr[0].Text(), "SUMMARY") || tr[1].Text() != "p3" {
		t.Fatalf("transcript:\n%s", dump(tr))
	}
	checkValid(t, a)
	// The next prompt is sent the summary and the tail.
	promptN(t, a, 1)
	last := sp.prompts[len(sp.prompts)-1]
	if len(last.Messages) != 6 || !compact.IsSummary(&last.Messages[0]) {
		t.Errorf("next request:\n%s", dump(last.Messages))
	}
}

func TestCompactKeepsToolCallsWithResults(t *testing.T) {
	sp := &summaryProvider{}
	a := newAgent(t, sp, func(c *Config) { c.KeepTail = 2 })
	call := &llm.ToolCallBlock{ID: "c1", Name: "ls", Args: []byte(`{}`)}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "one"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "ok"}}},
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "two"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{call}},
		{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{CallID: "c1", Name: "ls", Content: []llm.Block{&llm.TextBlock{Text: "a.go"}}}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "one file"}}},
	}
	if err := a.SetTranscript(msgs); err != nil {
		t.Fatalf("SetTranscript: %v", err)
	}
	rec := newRecorder(t)
	if err := a.Compact(context.Background(), "", rec.emit); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	tr := a.Transcript()
	if roles(tr) != "user assistant tool assistant" {
		t.Fatalf("transcript:\n%s", dump(tr))
	}
	checkValid(t, a)
}

func TestCompactNothingToDo(t *testing.T) {
	a := newAgent(t, &summaryProvider{}, nil)
	promptN(t, a, 1)
	rec := newRecorder(t)
	err := a.Compact(context.Background(), "", rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeInvalidParams || !errors.Is(err, compact.ErrNothingToCompact) {
		t.Fatalf("err = %v", err)
	}
	if len(rec.events()) != 0 || a.MessageCount() != 2 {
		t.Errorf("events %v, %d messages", rec.types(), a.MessageCount())
	}
}

func TestCompactAbortAndFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fail := false
	sp := &summaryProvider{summarise: func(c context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		if fail {
			return nil, &llm.Error{Provider: "fake", Status: 529, Kind: "overloaded_error", Message: "busy"}
		}
		sink(llm.Event{Kind: llm.EventStart})
		cancel()
		<-c.Done()
		return &llm.Response{Usage: llm.Usage{Input: 300}}, c.Err()
	}}
	a := newAgent(t, sp, nil)
	promptN(t, a, 3)
	before := a.Transcript()
	rec := newRecorder(t)
	checkAborted(t, a.Compact(ctx, "", rec.emit))
	wantTypes(t, rec.types(), "usage", "turn_end")
	if lastTurnEnd(t, rec).Stop != wire.StopAborted || a.MessageCount() != len(before) {
		t.Errorf("stop %s, %d messages", lastTurnEnd(t, rec).Stop, a.MessageCount())
	}
	fail = true
	rec2 := newRecorder(t)
	err := a.Compact(context.Background(), "", rec2.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError || !strings.Contains(ae.Error(), "529") {
		t.Fatalf("err = %v", err)
	}
	if len(rec2.events()) != 0 || a.MessageCount() != len(before) {
		t.Errorf("events %v, %d messages", rec2.types(), a.MessageCount())
	}
}

// bigPrompts reports a nearly full context for prompts containing "big".
func bigPrompts(text string) llm.Usage {
	if strings.Contains(text, "big") {
		return llm.Usage{Input: 7000, CacheRead: 1500, Output: 200}
	}
	return llm.Usage{Input: 100, Output: 10}
}

func TestAutoCompact(t *testing.T) {
	sp := &summaryProvider{promptUsage: bigPrompts}
	a := newAgent(t, sp, func(c *Config) { c.Model.ContextWindow = 10_000 })
	promptN(t, a, 2)
	if len(sp.summaries) != 0 {
		t.Fatal("compacted below the threshold")
	}
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "big one", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "text_delta+", "usage", "assistant_message", "turn_end",
		"usage", "compact_done")
	cd := eventsOf[*wire.CompactDoneEvent](rec)[0]
	if *cd.MessagesBefore != 6 || *cd.MessagesAfter != 5 || a.MessageCount() != 5 {
		t.Errorf("compact_done = %s; %d messages", cd.AppendJSON(nil), a.MessageCount())
	}
	checkValid(t, a)
	// The next small prompt does not compact again.
	promptN(t, a, 1)
	if len(sp.summaries) != 1 {
		t.Errorf("summaries = %d, want 1", len(sp.summaries))
	}
}

func TestAutoCompactOffAndThreshold(t *testing.T) {
	sp := &summaryProvider{promptUsage: bigPrompts}
	a := newAgent(t, sp, func(c *Config) { c.Model.ContextWindow = 10_000; c.AutoCompactOff = true })
	promptN(t, a, 2)
	if err := a.Prompt(context.Background(), "big", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(sp.summaries) != 0 {
		t.Error("compacted with auto-compaction off")
	}
	// 8,700 of 10,000 tokens is under a 0.9 threshold.
	sp2 := &summaryProvider{promptUsage: bigPrompts}
	a2 := newAgent(t, sp2, func(c *Config) { c.Model.ContextWindow = 10_000; c.CompactThreshold = 0.9 })
	promptN(t, a2, 2)
	if err := a2.Prompt(context.Background(), "big", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(sp2.summaries) != 0 {
		t.Error("compacted under the threshold")
	}
}

func TestAutoCompactAbortedAndFailed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fail := false
	sp := &summaryProvider{promptUsage: bigPrompts, summarise: func(c context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
		if fail {
			return nil, &llm.Error{Provider: "fake", Status: 500, Message: "down"}
		}
		cancel()
		return nil, c.Err()
	}}
	a := newAgent(t, sp, func(c *Config) { c.Model.ContextWindow = 10_000 })
	promptN(t, a, 2)
	rec := newRecorder(t)
	checkAborted(t, a.Prompt(ctx, "big", nil, rec.emit))
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "assistant_start", "text_delta+", "usage", "assistant_message", "turn_end", "turn_end")
	ends := eventsOf[*wire.TurnEndEvent](rec)
	if ends[0].Stop != wire.StopEndTurn || ends[1].Stop != wire.StopAborted {
		t.Errorf("stops %s %s", ends[0].Stop, ends[1].Stop)
	}
	if a.MessageCount() != 6 {
		t.Errorf("messages = %d, want the answered prompt kept (6)", a.MessageCount())
	}
	fail = true
	err := a.Prompt(context.Background(), "big again", nil, nil)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError || !strings.HasPrefix(ae.Error(), "automatic compaction failed: ") {
		t.Fatalf("err = %v", err)
	}
	if a.MessageCount() != 8 {
		t.Errorf("messages = %d, want 8", a.MessageCount())
	}
	checkValid(t, a)
}

// TestCompactWithScriptedProvider compacts through the scripted provider:
// its default script answers the summarising call with text.
func TestCompactWithScriptedProvider(t *testing.T) {
	a := newAgent(t, scripted.New(scripted.Config{Script: &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{{Echo: true, Usage: &llm.Usage{Input: 50, Output: 5}}}},
	}}}), nil)
	promptN(t, a, 3)
	rec := newRecorder(t)
	if err := a.Compact(context.Background(), "", rec.emit); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	cd := eventsOf[*wire.CompactDoneEvent](rec)[0]
	if !strings.HasPrefix(cd.Summary, "You said: ") || *cd.MessagesAfter != 5 {
		t.Errorf("compact_done = %s", cd.AppendJSON(nil))
	}
	// The scripted provider does not count the summary as a prompt: the
	// next prompt is still answered by echo.
	promptN(t, a, 1)
	if got := a.Transcript()[a.MessageCount()-1].Text(); got != "You said: p1" {
		t.Errorf("after compaction: %q", got)
	}
	checkValid(t, a)
}

// countSummaries passes calls to inner, counting the summarising ones.
type countSummaries struct {
	inner llm.Provider
	mu    sync.Mutex
	n     int
}

func (c *countSummaries) Name() string { return c.inner.Name() }

func (c *countSummaries) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	if isSummaryRequest(req) {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.inner.Stream(ctx, req, sink)
}

// TestCompactionReportsUsageOnce: a compaction that summarises in several
// calls (chunks, then a merge) reports one usage event, their sum, before
// compact_done, as docs/rpc.md shows ("[usage compact_done]"), whether a
// prompt's end triggered it or the compact command asked for it. Every
// call still counts in the running totals.
func TestCompactionReportsUsageOnce(t *testing.T) {
	perCall := llm.Usage{Input: 900, Output: 30, CacheRead: 100}
	echo := func(u llm.Usage) scripted.Turn {
		return scripted.Turn{Steps: []scripted.Step{{Echo: true, Usage: &u}}}
	}
	small := llm.Usage{Input: 100, Output: 10}
	// A summarising call is a transcript of one prompt, so the first turn
	// answers it; the fifth prompt fills the 4,000-token window.
	sc := &scripted.Script{Turns: []scripted.Turn{
		{Steps: []scripted.Step{{Text: "SUMMARY", Usage: &perCall}}},
		echo(small), echo(small), echo(small), echo(llm.Usage{Input: 3900}),
	}}
	long := strings.Repeat("word ", 300)
	for _, auto := range []bool{true, false} {
		name := "manual"
		if auto {
			name = "automatic"
		}
		t.Run(name, func(t *testing.T) {
			p := &countSummaries{inner: scripted.New(scripted.Config{Script: sc})}
			a := newAgent(t, p, func(c *Config) { c.Model.ContextWindow = 4000; c.AutoCompactOff = !auto })
			for i := 1; i <= 4; i++ {
				if err := a.Prompt(context.Background(), fmt.Sprintf("p%d %s", i, long), nil, nil); err != nil {
					t.Fatalf("prompt %d: %v", i, err)
				}
			}
			before := a.Usage()
			rec := newRecorder(t)
			err := a.Prompt(context.Background(), "p5 "+long, nil, rec.emit)
			if err != nil {
				t.Fatalf("prompt 5: %v", err)
			}
			want := []string{"user_message", "turn_start", "assistant_start", "text_delta+", "usage", "assistant_message", "turn_end"}
			if auto {
				want = append(want, "usage", "compact_done")
			} else {
				before = a.Usage()
				rec = newRecorder(t)
				if err := a.Compact(context.Background(), "", rec.emit); err != nil {
					t.Fatalf("Compact: %v", err)
				}
				want = []string{"usage", "compact_done"}
			}
			wantTypes(t, rec.types(), want...)
			if p.n < 3 {
				t.Fatalf("%d summarising calls; the transcript should need chunks and a merge", p.n)
			}
			var sum llm.Usage
			for range p.n {
				sum = sum.Add(perCall)
			}
			us := eventsOf[*wire.UsageEvent](rec)
			u := us[len(us)-1]
			model := a.Model()
			got := llm.Usage{Input: int(u.Input), Output: int(u.Output), CacheRead: int(u.CacheRead), CacheWrite: int(u.CacheWrite)}
			if got != sum || u.CostUSD != model.Cost(sum) {
				t.Errorf("usage = %s, want the sum of %d calls: %+v costing %v", u.AppendJSON(nil), p.n, sum, model.Cost(sum))
			}
			wantInput := before.Input + int64(sum.Input)
			if auto {
				wantInput += 3900 // the fifth prompt's own call
			}
			if u.Cumulative != a.Usage() || a.Usage().Input != wantInput {
				t.Errorf("cumulative = %+v, agent %+v, before %+v", u.Cumulative, a.Usage(), before)
			}
			checkValid(t, a)
		})
	}
}

// fullWindow answers the first prompt's call as a provider whose answer
// filled the context window (Anthropic's model_context_window_exceeded),
// and every other call (the compaction's summary) with text.
type fullWindow struct{ calls int }

func (*fullWindow) Name() string { return "full" }
func (f *fullWindow) Stream(_ context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	f.calls++
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "A long answer that"}}}
	if f.calls == 1 {
		return &llm.Response{Message: msg, Stop: llm.StopLength, Reason: llm.ContextFullReason, ContextFull: true, Usage: llm.Usage{Input: 10, Output: 10}}, nil
	}
	msg.Content = []llm.Block{&llm.TextBlock{Text: "The summary."}}
	return &llm.Response{Message: msg, Stop: llm.StopEndTurn, Usage: llm.Usage{Input: 10, Output: 3}}, nil
}

// TestContextFullCompacts: a step that stopped at the context window ends
// the prompt like a length stop, and the transcript is compacted whatever
// the threshold, so that the next prompt fits; max_tokens does not
// compact.
func TestContextFullCompacts(t *testing.T) {
	p := &fullWindow{}
	a := newAgent(t, p, func(c *Config) { c.KeepTail = -1 })
	for _, text := range []string{"one", "two"} {
		if err := a.SetTranscript(append(a.Transcript(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: text}}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "ok"}}})); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "three", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	if te := lastTurnEnd(t, rec); te.Stop != wire.StopLength || te.Reason != llm.ContextFullReason {
		t.Errorf("turn_end %+v", te)
	}
	if len(eventsOf[*wire.CompactDoneEvent](rec)) != 1 || p.calls != 2 {
		t.Fatalf("no compaction after a full context window (%d calls): %v", p.calls, rec.types())
	}
}
