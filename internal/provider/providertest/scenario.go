package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// Dial returns the provider under test aimed at srv, with its backoff
// sleeps recorded in sl instead of slept.
type Dial func(srv *httptest.Server, sl *Sleeps) llm.Provider

// Run is the outcome of one scenario's call, for the provider-specific
// assertions a test adds to the scenario's own.
type Run struct {
	Resp     *llm.Response // the response returned by Stream
	Err      error         // the error returned by Stream
	Server   *Server       // the fake server, nil for handler-based scenarios
	Sleeps   *Sleeps       // the backoff delays recorded
	Recorder *Recorder     // the events reported
}

// ProviderError returns Err as an *llm.Error, or nil if it is not one.
func (r *Run) ProviderError() *llm.Error {
	var le *llm.Error
	if errors.As(r.Err, &le) {
		return le
	}
	return nil
}

// stream serves replies from a new Server and makes one call with
// req through the provider dial returns.
func stream(t *testing.T, dial Dial, req *llm.Request, replies ...Reply) *Run {
	t.Helper()
	run := &Run{Server: NewServer(t, replies...), Sleeps: &Sleeps{}, Recorder: &Recorder{}}
	run.Resp, run.Err = dial(run.Server.Server, run.Sleeps).Stream(HangGuard(t), req, run.Recorder.Sink)
	return run
}

// RetriedOnce checks that a call whose first answer is first (a failure
// before any output) is retried once, after one backoff, and then succeeds
// with the text.sse fixture, whose text is wantText, reporting EventStart
// only once.
func RetriedOnce(t *testing.T, dial Dial, req *llm.Request, first Reply, wantText string) *Run {
	t.Helper()
	run := stream(t, dial, req, first, Reply{File: "text.sse"})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	if len(run.Server.Requests()) != 2 || len(run.Sleeps.Got()) != 1 || run.Recorder.Count(llm.EventStart) != 1 {
		t.Fatalf("requests %d sleeps %v events %+v", len(run.Server.Requests()), run.Sleeps.Got(), run.Recorder.Events)
	}
	if run.Resp.Message.Text() != wantText {
		t.Fatalf("response = %s", Dump(run.Resp.Message.Content))
	}
	return run
}

// RetryAfterHonoured checks that a call whose first answer is first (a
// rate limit naming its delay) waits exactly wantSleep, then succeeds with
// the text.sse fixture, whose text is wantText, reporting EventStart only
// once.
func RetryAfterHonoured(t *testing.T, dial Dial, req *llm.Request, first Reply, wantSleep time.Duration, wantText string) *Run {
	t.Helper()
	run := stream(t, dial, req, first, Reply{File: "text.sse"})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	if d := run.Sleeps.Got(); !slices.Equal(d, []time.Duration{wantSleep}) {
		t.Fatalf("sleeps = %v, want [%v]", d, wantSleep)
	}
	if run.Resp.Message.Text() != wantText || run.Recorder.Count(llm.EventStart) != 1 {
		t.Fatalf("response %+v events %+v", run.Resp, run.Recorder.Events)
	}
	return run
}

// NotRetried checks that a call whose first answer is first fails at once
// with exactly want: one request, no backoff, no events, and a response
// that stopped with an error.
func NotRetried(t *testing.T, dial Dial, req *llm.Request, first Reply, want llm.Error) *Run {
	t.Helper()
	run := stream(t, dial, req, first, Reply{File: "text.sse"})
	var le *llm.Error
	if !errors.As(run.Err, &le) {
		t.Fatalf("err = %v", run.Err)
	}
	if *le != want {
		t.Fatalf("err = %#v, want %#v", *le, want)
	}
	if len(run.Server.Requests()) != 1 || len(run.Sleeps.Got()) != 0 || len(run.Recorder.Events) != 0 || run.Resp == nil || run.Resp.Stop != llm.StopError {
		t.Fatalf("requests %d sleeps %v events %v resp %+v", len(run.Server.Requests()), run.Sleeps.Got(), run.Recorder.Events, run.Resp)
	}
	return run
}

// CutStream checks that a stream cut after output (the cut.sse fixture)
// fails with a stream_cut error without a retry, keeping the text received,
// wantText, in a response that stopped with an error. The error is
// returned as Run.Err, an *llm.Error.
func CutStream(t *testing.T, dial Dial, req *llm.Request, wantText string) *Run {
	t.Helper()
	run := stream(t, dial, req, Reply{File: "cut.sse"})
	var le *llm.Error
	if !errors.As(run.Err, &le) || le.Kind != "stream_cut" {
		t.Fatalf("err = %#v, want stream_cut", run.Err)
	}
	if len(run.Server.Requests()) != 1 || run.Resp.Message.Text() != wantText || run.Resp.Stop != llm.StopError {
		t.Fatalf("requests %d partial %s stop %q", len(run.Server.Requests()), Dump(run.Resp.Message.Content), run.Resp.Stop)
	}
	return run
}

// CutBeforeOutputIsRetried checks that a stream ending after head, before
// any output, is retried without a backoff check and then succeeds with the
// text.sse fixture, whose text is wantText, reporting EventStart only once.
func CutBeforeOutputIsRetried(t *testing.T, dial Dial, req *llm.Request, head, wantText string) {
	t.Helper()
	var n atomic.Int32
	srv := HandlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) == 1 {
			io.WriteString(w, head)
			return
		}
		w.Write(Fixture(t, "text.sse"))
	})
	rec := &Recorder{}
	resp, err := dial(srv, &Sleeps{}).Stream(HangGuard(t), req, rec.Sink)
	if err != nil || resp.Message.Text() != wantText || n.Load() != 2 || rec.Count(llm.EventStart) != 1 {
		t.Fatalf("err %v response %s after %d requests", err, Dump(resp.Message.Content), n.Load())
	}
}

// StalledStreamHitsIdleTimeout checks that a stream stalling after head
// (whose text is wantText) fails with a retryable idle_timeout error,
// keeping that text. idle must dial a provider with a short idle timeout.
func StalledStreamHitsIdleTimeout(t *testing.T, idle Dial, req *llm.Request, head, wantText string) {
	t.Helper()
	srv := HandlerServer(t, Stall(head))
	p := idle(srv, &Sleeps{})
	var resp *llm.Response
	var err error
	RunAsync(t, func() { resp, err = p.Stream(HangGuard(t), req, (&Recorder{}).Sink) })
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "idle_timeout" || !le.Retryable {
		t.Fatalf("err = %#v, want idle_timeout", err)
	}
	if resp.Stop != llm.StopError || resp.Message.Text() != wantText {
		t.Fatalf("response = %s stop %q", Dump(resp.Message.Content), resp.Stop)
	}
}

// StallBeforeOutputIsRetried checks that a stream stalling before any
// output is retried after the idle timeout and then succeeds with the
// text.sse fixture, whose text is wantText. idle must dial a provider with
// a short idle timeout.
func StallBeforeOutputIsRetried(t *testing.T, idle Dial, req *llm.Request, wantText string) {
	t.Helper()
	var n atomic.Int32
	srv := HandlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			Stall("")(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(Fixture(t, "text.sse"))
	})
	p := idle(srv, &Sleeps{})
	var resp *llm.Response
	var err error
	RunAsync(t, func() { resp, err = p.Stream(HangGuard(t), req, (&Recorder{}).Sink) })
	if err != nil || resp.Message.Text() != wantText || n.Load() != 2 {
		t.Fatalf("err %v response %+v after %d requests", err, resp, n.Load())
	}
}

// CancelBeforeHeaders checks that cancelling a call while the server has
// not yet answered returns context.Canceled at once, with an aborted,
// empty response and no events.
func CancelBeforeHeaders(t *testing.T, dial Dial, req *llm.Request) {
	t.Helper()
	arrived := make(chan struct{}, 1)
	srv := HandlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(HangGuard(t))
	defer cancel()
	go func() { // ends when the request arrives or the deferred cancel runs
		select {
		case <-arrived:
			cancel()
		case <-ctx.Done():
		}
	}()
	rec := &Recorder{}
	var resp *llm.Response
	var err error
	RunAsync(t, func() { resp, err = dial(srv, &Sleeps{}).Stream(ctx, req, rec.Sink) })
	if !errors.Is(err, context.Canceled) || resp.Stop != llm.StopAborted || len(rec.Events) != 0 || len(resp.Message.Content) != 0 {
		t.Fatalf("err %v response %+v events %+v", err, resp, rec.Events)
	}
}

// CancelMidStream checks that cancelling a call from the sink at its first
// text delta, while the server stalls after head (whose text is wantText),
// returns context.Canceled with an aborted response keeping that text.
func CancelMidStream(t *testing.T, dial Dial, req *llm.Request, head, wantText string) {
	t.Helper()
	srv := HandlerServer(t, Stall(head))
	ctx, cancel := context.WithCancel(HangGuard(t))
	defer cancel()
	sink := func(ev llm.Event) {
		if ev.Kind == llm.EventTextDelta {
			cancel()
		}
	}
	var resp *llm.Response
	var err error
	RunAsync(t, func() { resp, err = dial(srv, &Sleeps{}).Stream(ctx, req, sink) })
	if err != context.Canceled || resp.Stop != llm.StopAborted || resp.Message.Text() != wantText {
		t.Fatalf("err %v response %+v", err, resp)
	}
}
