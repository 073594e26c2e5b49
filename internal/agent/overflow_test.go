package agent

import (
	"context"
	"errors"
	"sync"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// tooLongProvider refuses any prompt request with more than limit
// messages, the way providers refuse a request over the context window;
// summary requests always succeed.
type tooLongProvider struct {
	summaryProvider
	limit int

	mu      sync.Mutex
	refused int
}

func (p *tooLongProvider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	if !isSummaryRequest(req) && len(req.Messages) > p.limit {
		p.mu.Lock()
		p.refused++
		p.mu.Unlock()
		return nil, &llm.Error{Provider: "fake", Status: 400, Kind: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}
	}
	return p.summaryProvider.Stream(ctx, req, sink)
}

func TestContextOverflowCompactsAndRetriesOnce(t *testing.T) {
	p := &tooLongProvider{limit: 6}
	a := newAgent(t, p, nil)
	promptN(t, a, 3) // 6 messages
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "one more", nil, rec.emit); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	wantTypes(t, rec.types(),
		"user_message", "turn_start", "usage", "compact_done",
		"assistant_start", "text_delta+", "usage", "assistant_message", "turn_end")
	if p.refused != 1 || len(p.summaries) != 1 {
		t.Errorf("refused %d, summaries %d", p.refused, len(p.summaries))
	}
	last := a.Transcript()[a.MessageCount()-1]
	if last.Text() != "echo: one more" {
		t.Errorf("last message %q", last.Text())
	}
	checkValid(t, a)
}

func TestContextOverflowThatPersistsIsAnErrorAndRollsBack(t *testing.T) {
	p := &tooLongProvider{limit: 0} // even one message is too long
	a := newAgent(t, p, nil)
	rec := newRecorder(t)
	err := a.Prompt(context.Background(), "hello", nil, rec.emit)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != wire.CodeProviderError {
		t.Fatalf("err = %v", err)
	}
	if a.MessageCount() != 0 {
		t.Errorf("the refused prompt stayed: %d messages", a.MessageCount())
	}
	// Nothing to compact: tried once, not retried.
	if p.refused != 1 {
		t.Errorf("refused %d times", p.refused)
	}
}

func TestContextOverflowWithAutoCompactOff(t *testing.T) {
	p := &tooLongProvider{limit: 2}
	a := newAgent(t, p, func(c *Config) { c.AutoCompactOff = true })
	promptN(t, a, 1)
	if err := a.Prompt(context.Background(), "again", nil, nil); err == nil {
		t.Fatal("a refused request succeeded with auto-compaction off")
	}
	if len(p.summaries) != 0 {
		t.Error("compacted with auto-compaction off")
	}
}

func TestContextOverflowDetection(t *testing.T) {
	yes := []error{
		&llm.Error{Status: 413, Message: "request entity too large"},
		&llm.Error{Status: 400, Kind: "context_length_exceeded"},
		&llm.Error{Status: 400, Message: "This model's maximum context length is 128000 tokens"},
		&llm.Error{Status: 400, Message: "The input token count (1200000) exceeds the maximum number of tokens allowed"},
	}
	for _, e := range yes {
		if !contextOverflow(e) {
			t.Errorf("%v not seen as overflow", e)
		}
	}
	for _, e := range []error{&llm.Error{Status: 401, Message: "invalid x-api-key"}, errors.New("prompt is too long")} {
		if contextOverflow(e) {
			t.Errorf("%v seen as overflow", e)
		}
	}
}
