package openai

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/transport"
)

// reply is one canned answer of the fake server.
type reply struct {
	status int               // 0 means 200
	header map[string]string // extra response headers
	file   string            // testdata file served as the body
}

// seenRequest is what the fake server received.
type seenRequest struct {
	path   string
	header http.Header
	body   []byte
}

// fakeServer answers successive requests with replies, repeating the last.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

func newFakeServer(t *testing.T, replies ...reply) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.seen)
		f.seen = append(f.seen, seenRequest{r.URL.Path, r.Header.Clone(), body})
		f.mu.Unlock()
		rep := replies[min(n, len(replies)-1)]
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status != 0 && rep.status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.status)
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.Write(fixture(t, rep.file))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

// sleeps records backoff delays without sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// recorder collects sink events.
type recorder struct{ events []llm.Event }

func (r *recorder) sink(ev llm.Event) { r.events = append(r.events, ev) }

func (r *recorder) count(kind llm.EventKind) int {
	n := 0
	for _, ev := range r.events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// testProvider returns a provider aimed at srv that never really sleeps.
func testProvider(srv *httptest.Server, sl *sleeps) *Provider {
	return New(Config{APIKey: "test-key", BaseURL: srv.URL + "/v1", Options: transport.Options{Sleep: sl.sleep}})
}

func hangGuard(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// simpleRequest is a one-message request.
func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gpt-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}}}}
}
