package httpcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"zot.dev/zot/internal/llm"
)

// sleepRecorder is an Options.Sleep that records delays and returns at once.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (r *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.delays = append(r.delays, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *sleepRecorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.delays...)
}

// decodeTestErr reads {"error":{"type","message"}}.
func decodeTestErr(status int, body []byte) (string, string) {
	var v struct {
		Error struct{ Type, Message string }
	}
	if json.Unmarshal(body, &v) != nil {
		return "", ""
	}
	return v.Error.Type, v.Error.Message
}

// failThenStream answers the first failures requests with status and
// header, then streams one event.
func failThenStream(t *testing.T, failures, status int, header http.Header) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if int(n) <= failures {
			for k, v := range header {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"type":"test_error","message":"try later"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: done\ndata: ok\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func hangGuard(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func expectOneEvent(t *testing.T, s *Stream) {
	t.Helper()
	defer s.Close()
	ev, err := s.Next()
	if err != nil || ev.Name != "done" || string(ev.Data) != "ok" {
		t.Fatalf("event = %q %q, %v", ev.Name, ev.Data, err)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("end = %v, want io.EOF", err)
	}
}

func TestPostRetriesRetryableStatuses(t *testing.T) {
	for _, status := range []int{408, 409, 429, 500, 501, 502, 503, 504, 529} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv, calls := failThenStream(t, 2, status, nil)
			rec := &sleepRecorder{}
			opt := Options{Sleep: rec.sleep, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
			s, err := Post(hangGuard(t), "test", srv.URL, nil, []byte(`{}`), opt, decodeTestErr)
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			expectOneEvent(t, s)
			if calls.Load() != 3 {
				t.Fatalf("calls = %d, want 3", calls.Load())
			}
			delays := rec.got()
			if len(delays) != 2 {
				t.Fatalf("delays = %v, want 2", delays)
			}
			for i, d := range delays {
				ceil := 100 * time.Millisecond << i
				if d < 0 || d > ceil {
					t.Errorf("delay %d = %v, want within [0, %v]", i, d, ceil)
				}
			}
		})
	}
}

// TestPostObeysShouldRetry: the x-should-retry header decides over the
// status, as in the official SDKs (@anthropic-ai/sdk 1.12.0 src/client.ts
// shouldRetry: "If the server explicitly says whether or not to retry,
// obey").
func TestPostObeysShouldRetry(t *testing.T) {
	tests := []struct {
		status int
		header string
		calls  int32
	}{
		{400, "true", 2},  // a status never retried, retried when the server says so
		{503, "false", 1}, // a status always retried, not when the server says no
		{409, "", 2},
		{400, "", 1},
		{404, "", 1},
	}
	for _, tt := range tests {
		srv, calls := failThenStream(t, 1, tt.status, http.Header{"X-Should-Retry": {tt.header}})
		opt := Options{Sleep: (&sleepRecorder{}).sleep, MaxAttempts: 2}
		s, err := Post(hangGuard(t), "test", srv.URL, nil, []byte(`{}`), opt, decodeTestErr)
		if s != nil {
			s.Close()
		}
		if calls.Load() != tt.calls || (tt.calls == 2) != (err == nil) {
			t.Errorf("status %d x-should-retry %q: %d calls, err %v; want %d calls", tt.status, tt.header, calls.Load(), err, tt.calls)
		}
	}
}

func TestPostHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name     string
		header   http.Header
		min, max time.Duration
	}{
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, 7 * time.Second},
		{"fractional ms", http.Header{"Retry-After-Ms": {"1500.5"}}, 1500*time.Millisecond + 500*time.Microsecond, 1500*time.Millisecond + 500*time.Microsecond},
		{"ms wins over seconds", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, 250 * time.Millisecond},
		// An HTTP date has one-second resolution and the clock moves on.
		{"http date", http.Header{"Retry-After": {time.Now().Add(12 * time.Second).UTC().Format(http.TimeFormat)}}, 9 * time.Second, 12 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := failThenStream(t, 1, 429, tt.header)
			rec := &sleepRecorder{}
			s, err := Post(hangGuard(t), "test", srv.URL, nil, []byte(`{}`), Options{Sleep: rec.sleep}, decodeTestErr)
			if err != nil {
				t.Fatalf("Post: %v", err)
			}
			expectOneEvent(t, s)
			delays := rec.got()
			if len(delays) != 1 || delays[0] < tt.min || delays[0] > tt.max {
				t.Fatalf("delays = %v, want one in [%v, %v]", delays, tt.min, tt.max)
			}
		})
	}
}

func TestPostRetryAfterTooLong(t *testing.T) {
	srv, calls := failThenStream(t, 1, 429, http.Header{"Retry-After": {"3600"}})
	rec := &sleepRecorder{}
	_, err := Post(hangGuard(t), "test", srv.URL, nil, []byte(`{}`), Options{Sleep: rec.sleep, MaxDelay: time.Second}, decodeTestErr)
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want *llm.Error", err)
	}
	if le.Status != 429 || !le.Retryable || le.RetryAfter != time.Hour || le.Kind != "test_error" || le.Message != "try later" {
		t.Fatalf("err = %#v", le)
	}
	if calls.Load() != 1 || len(rec.got()) != 0 {
		t.Fatalf("calls = %d, sleeps = %v: a long Retry-After must not be waited for", calls.Load(), rec.got())
	}
}

func TestPostNoRetryOnClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 404} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv, calls := failThenStream(t, 10, status, nil)
			rec := &sleepRecorder{}
			_, err := Post(hangGuard(t), "test", srv.URL, nil, []byte(`{}`), Options{Sleep: rec.sleep}, decodeTestErr)
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			want := llm.Error{Provider: "test", Status: status, Kind: "test_error", Message: "try later"}
			if *le != want {
				t.Fatalf("err = %#v, want %#v", *le, want)
			}
			if calls.Load() != 1 || len(rec.got()) != 0 {
				t.Fatalf("calls = %d, sleeps = %v, want 1 call and no retry", calls.Load(), rec.got())
			}
		})
	}
}

func TestPostMaxAttempts(t *testing.T) {
	for _, max := range []int{0, 1, 2, 6} {
		srv, calls := failThenStream(t, 100, 503, nil)
		rec := &sleepRecorder{}
		_, err := Post(hangGuard(t), "test", srv.URL, nil, []byte(`{}`), Options{Sleep: rec.sleep, MaxAttempts: max}, nil)
		want := max
		if want == 0 {
			want = defaultMaxAttempts
		}
		var le *llm.Error
		if !errors.As(err, &le) || le.Status != 503 || !le.Retryable {
			t.Fatalf("MaxAttempts %d: err = %v", max, err)
		}
		if int(calls.Load()) != want || len(rec.got()) != want-1 {
			t.Fatalf("MaxAttempts %d: calls = %d, sleeps = %d, want %d calls", max, calls.Load(), len(rec.got()), want)
		}
	}
}

func TestPostErrorBodyWithoutDecoder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "  forbidden here\n")
	}))
	defer srv.Close()
	_, err := Post(hangGuard(t), "test", srv.URL, nil, nil, Options{}, nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Message != "forbidden here" || le.Status != 403 || le.Retryable {
		t.Fatalf("err = %#v", err)
	}
}

func TestPostErrorBodyCapped(t *testing.T) {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, strings.Repeat("x", 3<<20))
	}))
	defer srv.Close()
	decode := func(status int, body []byte) (string, string) {
		seen.Store(int64(len(body)))
		return "big", "too big"
	}
	_, err := Post(hangGuard(t), "test", srv.URL, nil, nil, Options{}, decode)
	if err == nil || seen.Load() != maxErrorBody {
		t.Fatalf("decoder saw %d bytes, want %d (err %v)", seen.Load(), maxErrorBody, err)
	}
}

func TestPostSendsBodyAndHeaders(t *testing.T) {
	type seen struct {
		method, ctype, accept, key string
		body                       []byte
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("X-Api-Key"), b}
		io.WriteString(w, "event: done\ndata: ok\n\n")
	}))
	defer srv.Close()
	h := http.Header{"X-Api-Key": {"test-key"}}
	s, err := Post(hangGuard(t), "test", srv.URL, h, []byte(`{"a":1}`), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	expectOneEvent(t, s)
	g := <-got
	if g.method != "POST" || g.ctype != "application/json" || g.accept != "text/event-stream" || g.key != "test-key" || string(g.body) != `{"a":1}` {
		t.Fatalf("server saw %+v", g)
	}
	if len(h) != 1 {
		t.Fatalf("caller's header was modified: %v", h)
	}
}

func TestPostConnectErrorRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rec := &sleepRecorder{}
	_, err = Post(hangGuard(t), "test", "http://"+addr+"/v1", nil, nil, Options{Sleep: rec.sleep, MaxAttempts: 3}, nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "connect" || !le.Retryable || le.Err == nil {
		t.Fatalf("err = %#v, want retryable connect error", err)
	}
	if len(rec.got()) != 2 {
		t.Fatalf("sleeps = %v, want 2 (3 attempts)", rec.got())
	}
}

func TestPostInvalidURL(t *testing.T) {
	for _, u := range []string{"ftp://example.invalid/x", "not a url", "http://"} {
		_, err := Post(hangGuard(t), "test", u, nil, nil, Options{}, nil)
		if err == nil || llm.IsRetryable(err) {
			t.Errorf("Post(%q) err = %v, want a non-retryable error", u, err)
		}
	}
}

func TestPostCancelledDuringBackoff(t *testing.T) {
	srv, calls := failThenStream(t, 100, 503, nil)
	ctx, cancel := context.WithCancel(hangGuard(t))
	opt := Options{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleep(ctx, time.Hour)
	}}
	_, err := Post(ctx, "test", srv.URL, nil, nil, opt, nil)
	if !errors.Is(err, context.Canceled) || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls, want context.Canceled after 1", err, calls.Load())
	}
}

func TestPostCancelledWhileWaitingForHeaders(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(hangGuard(t))
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Post(ctx, "test", srv.URL, nil, nil, Options{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// chunkBody is a Body that is not one slice: it reads its text in small
// pieces, as a payload with long texts does.
type chunkBody string

func (b chunkBody) Len() int64        { return int64(len(b)) }
func (b chunkBody) Reader() io.Reader { return iotest.HalfReader(strings.NewReader(string(b))) }

// TestPostFromSendsWholeBodyOnEveryAttempt: a body read as it is sent goes
// with its Content-Length, and whole again on each retry.
func TestPostFromSendsWholeBodyOnEveryAttempt(t *testing.T) {
	body := chunkBody(strings.Repeat(`{"text":"abc"}`, 10_000))
	var calls atomic.Int32
	bad := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != string(body) || r.ContentLength != body.Len() {
			bad <- fmt.Sprintf("attempt %d: %d bytes, Content-Length %d", calls.Load()+1, len(b), r.ContentLength)
		}
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "event: done\ndata: ok\n\n")
	}))
	defer srv.Close()
	rec := &sleepRecorder{}
	s, err := PostFrom(hangGuard(t), "test", srv.URL, nil, body, Options{Sleep: rec.sleep}, nil)
	if err != nil {
		t.Fatal(err)
	}
	expectOneEvent(t, s)
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
	if calls.Load() != 2 {
		t.Fatalf("calls = %d, want 2", calls.Load())
	}
}
