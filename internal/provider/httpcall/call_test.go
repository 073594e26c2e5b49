package httpcall

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

func callServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: x\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCallRetriesOnlyBeforeOutput(t *testing.T) {
	srv := callServer(t)
	overloaded := &llm.Error{Kind: "overloaded_error", Message: "busy", Retryable: true}
	opt := Options{MaxAttempts: 3, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	once := Options{MaxAttempts: 1}
	open := func(ctx context.Context) (*Stream, error) {
		return Post(ctx, "test", srv.URL, nil, []byte("{}"), once, nil)
	}
	for _, c := range []struct {
		name     string
		reported bool
		tries    int
	}{{"before output", false, 3}, {"after output", true, 1}} {
		tries, starts := 0, 0
		err := Call(context.Background(), opt, Attempt{
			Open:    open,
			Started: func() { starts++ },
			Read: func(s *Stream) (bool, error) {
				tries++
				return c.reported, overloaded
			},
		})
		if !errors.Is(err, overloaded) && !strings.Contains(err.Error(), "busy") || tries != c.tries || starts != 1 {
			t.Errorf("%s: err %v, tries %d, starts %d", c.name, err, tries, starts)
		}
		var le *llm.Error
		if !errors.As(err, &le) {
			t.Errorf("%s: the provider's error is not returned as is: %T", c.name, err)
		}
	}
}

func TestCallReturnsTheContextErrorAfterCancel(t *testing.T) {
	srv := callServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := Call(ctx, Options{MaxAttempts: 1}, Attempt{
		Open: func(ctx context.Context) (*Stream, error) {
			return Post(ctx, "test", srv.URL, nil, []byte("{}"), Options{MaxAttempts: 1}, nil)
		},
		Read: func(s *Stream) (bool, error) {
			cancel()
			return true, errors.New("read failed")
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestCallRecyclesStreams runs calls one after another, so that each
// stream reads with the buffer the one before gave back, and checks that
// every call reads its own answer whole and that a stream kept past its
// call reads nothing more.
func TestCallRecyclesStreams(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		n := r.URL.Query().Get("n")
		io.WriteString(w, "data: "+strings.Repeat(n, 10000)+"\n\ndata: end "+n+"\n\n")
	}))
	t.Cleanup(srv.Close)
	var kept *Stream
	for _, n := range []string{"a", "b", "c", "d"} {
		var got []string
		err := Call(context.Background(), Options{MaxAttempts: 1}, Attempt{
			Open: func(ctx context.Context) (*Stream, error) {
				return Post(ctx, "test", srv.URL+"?n="+n, nil, []byte("{}"), Options{MaxAttempts: 1}, nil)
			},
			Read: func(s *Stream) (bool, error) {
				kept = s
				for {
					ev, err := s.Next()
					if errors.Is(err, io.EOF) {
						return true, nil
					}
					if err != nil {
						return true, err
					}
					got = append(got, string(ev.Data))
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] != strings.Repeat(n, 10000) || got[1] != "end "+n {
			t.Fatalf("call %s read %d events: %.40q", n, len(got), got)
		}
		if _, err := kept.Next(); !errors.Is(err, errFinished) {
			t.Fatalf("Next after the call: %v, want %v", err, errFinished)
		}
	}
}

// readOne reads one event and stops, as a provider does at its end marker.
func readOne(s *Stream) (bool, error) {
	_, err := s.Next()
	return true, err
}

// TestCallReusesTheConnection stops reading at an event, as providers do
// at their end marker, and checks that the calls still share one
// connection: the rest of the body is drained, not cut.
func TestCallReusesTheConnection(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: end\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, ": trailing comment\n\n")
	}))
	t.Cleanup(srv.Close)
	for range 5 {
		err := Call(context.Background(), Options{MaxAttempts: 1}, Attempt{
			Open: func(ctx context.Context) (*Stream, error) {
				return Post(ctx, "test", srv.URL, nil, []byte("{}"), Options{MaxAttempts: 1}, nil)
			},
			Read: readOne,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 1 {
		t.Errorf("5 calls used %d connections, want 1", len(conns))
	}
}

// TestCallCutsABodyLeftOpen checks that a server that keeps the body open
// after the event the reader stopped at does not hold the call.
func TestCallCutsABodyLeftOpen(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: end\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	done := make(chan error, 1)
	go func() {
		done <- Call(context.Background(), Options{MaxAttempts: 1}, Attempt{
			Open: func(ctx context.Context) (*Stream, error) {
				return Post(ctx, "test", srv.URL, nil, []byte("{}"), Options{MaxAttempts: 1}, nil)
			},
			Read: readOne,
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call waited for a body its server kept open")
	}
}
