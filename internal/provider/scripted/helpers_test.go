package scripted

import (
	"context"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// recorder collects the events reported to a sink.
type recorder struct {
	mu     sync.Mutex
	events []llm.Event
}

func (r *recorder) sink(ev llm.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func (r *recorder) all() []llm.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llm.Event(nil), r.events...)
}

// texts returns the Text of the events of kind.
func (r *recorder) texts(kind llm.EventKind) []string {
	var out []string
	for _, ev := range r.all() {
		if ev.Kind == kind {
			out = append(out, ev.Text)
		}
	}
	return out
}

// sleeps records the waits asked of a fake Sleep, which returns at once.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ds...)
}

func user(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: text}}}
}

func assistant(text string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: text}}}
}

func toolResult(id, text string) llm.Message {
	return llm.Message{Role: llm.RoleTool, Content: []llm.Block{&llm.ToolResultBlock{
		CallID: id, Name: "bash", Content: []llm.Block{&llm.TextBlock{Text: text}},
	}}}
}

func request(msgs ...llm.Message) *llm.Request {
	return &llm.Request{Model: "scripted", Messages: msgs}
}

// mustParse parses a script or fails the test.
func mustParse(t *testing.T, text string) *Script {
	t.Helper()
	s, err := Parse([]byte(text), "test.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hangGuard returns a context that ends the test if it hangs.
func hangGuard(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// kinds returns the kinds of evs.
func kinds(evs []llm.Event) []llm.EventKind {
	out := make([]llm.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}
