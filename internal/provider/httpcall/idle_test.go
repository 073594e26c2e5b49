package httpcall

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// stallingServer sends one event, then holds the stream open without a
// byte until the client goes away.
func stallingServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: first\ndata: 1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestIdleTimeout(t *testing.T) {
	srv := stallingServer(t)
	s, err := Post(hangGuard(t), "test", srv.URL, nil, nil, Options{IdleTimeout: 150 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil || ev.Name != "first" {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	_, err = s.Next()
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "idle_timeout" || !le.Retryable {
		t.Fatalf("err = %#v, want idle_timeout", err)
	}
}

func TestIdleTimeoutIgnoresSlowConsumer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: 1\n\ndata: 2\n\n")
	}))
	defer srv.Close()
	s, err := Post(hangGuard(t), "test", srv.URL, nil, nil, Options{IdleTimeout: 50 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the consumer dawdles; the network did not stall
	if ev, err := s.Next(); err != nil || string(ev.Data) != "2" {
		t.Fatalf("second event = %q, %v", ev.Data, err)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("end = %v", err)
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := stallingServer(t)
	ctx, cancel := context.WithCancel(hangGuard(t))
	defer cancel()
	s, err := Post(ctx, "test", srv.URL, nil, nil, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return after cancellation")
	}
}

func TestCloseUnblocksNext(t *testing.T) {
	srv := stallingServer(t)
	s, err := Post(hangGuard(t), "test", srv.URL, nil, nil, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if err == nil || err == io.EOF {
			t.Fatalf("err = %v, want a read error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return after Close")
	}
}
