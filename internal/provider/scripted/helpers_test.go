package scripted

import (
	"sync"
	"testing"

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

// kinds returns the kinds of evs.
func kinds(evs []llm.Event) []llm.EventKind {
	out := make([]llm.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}
