package providertest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// Sleeps records backoff delays without sleeping. Its Sleep method is
// meant for httpcall.Options.Sleep. The zero value is ready to use.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns at once with ctx's error, if any.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Got returns a copy of the delays recorded so far, in order.
func (s *Sleeps) Got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// Recorder collects the events reported to its Sink. The zero value is
// ready to use. It is not safe for concurrent use, like a sink itself.
type Recorder struct {
	// Events holds every event received, in order.
	Events []llm.Event
}

// Sink appends ev to r.Events; it is an llm.Sink.
func (r *Recorder) Sink(ev llm.Event) { r.Events = append(r.Events, ev) }

// Count returns how many recorded events are of kind.
func (r *Recorder) Count(kind llm.EventKind) int {
	n := 0
	for _, ev := range r.Events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// HangGuard returns a context that ends 15 seconds from now (or when the
// test ends), so that a provider that hangs fails the test instead of
// blocking it.
func HangGuard(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// RunAsync runs f on its own goroutine and fails the test if it does not
// return within a generous hang guard.
func RunAsync(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return")
	}
}

// Dump renders blocks as indented JSON for failure messages.
func Dump(blocks []llm.Block) string {
	b, _ := json.MarshalIndent(blocks, "", "  ")
	return string(b)
}
