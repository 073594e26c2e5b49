package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// Dial returns the provider under test aimed at srv, with its backoff
// sleeps recorded in sl instead of slept.
type Dial func(srv *httptest.Server, sl *Sleeps) llm.Provider

// Run is the outcome of one call, for the provider-specific assertions a
// test adds to a scenario's own.
type Run struct {
	Provider llm.Provider  // the provider that made the call
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

// WantEvents fails the test unless the events reported are exactly want.
func (r *Run) WantEvents(t *testing.T, want []llm.Event) {
	t.Helper()
	if !reflect.DeepEqual(r.Recorder.Events, want) {
		t.Fatalf("events =\n%+v\nwant\n%+v", r.Recorder.Events, want)
	}
}

// WantContent fails the test unless the response is an assistant message
// whose content is exactly want.
func (r *Run) WantContent(t *testing.T, want []llm.Block) {
	t.Helper()
	if r.Resp.Message.Role != llm.RoleAssistant || !reflect.DeepEqual(r.Resp.Message.Content, want) {
		t.Fatalf("%s message, content = %s\nwant %s", r.Resp.Message.Role, Dump(r.Resp.Message.Content), Dump(want))
	}
}

// WantEnd fails the test unless the response stopped for stop with usage.
func (r *Run) WantEnd(t *testing.T, stop llm.StopReason, usage llm.Usage) {
	t.Helper()
	if r.Resp.Stop != stop || r.Resp.Usage != usage {
		t.Fatalf("stop %q usage %+v, want %q %+v", r.Resp.Stop, r.Resp.Usage, stop, usage)
	}
}

// Stream serves replies from a new [Server] and makes one call with req
// through the provider dial returns, whatever its outcome.
func Stream(t *testing.T, dial Dial, req *llm.Request, replies ...Reply) *Run {
	t.Helper()
	run := &Run{Server: NewServer(t, replies...), Sleeps: &Sleeps{}, Recorder: &Recorder{}}
	run.Provider = dial(run.Server.Server, run.Sleeps)
	run.Resp, run.Err = run.Provider.Stream(HangGuard(t), req, run.Recorder.Sink)
	return run
}

// Replay makes one call with req through the provider dial returns,
// answered with the testdata fixture file as an event stream, and fails
// the test if the call fails.
func Replay(t *testing.T, dial Dial, req *llm.Request, file string) *Run {
	t.Helper()
	run := Stream(t, dial, req, Reply{File: file})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	return run
}

// TextOnly checks a call answered with the text.sse fixture, a plain text
// answer streamed as deltas: the events are a start and one text delta
// each, the response is one text block, and it ends the turn with usage.
func TextOnly(t *testing.T, dial Dial, req *llm.Request, deltas []string, usage llm.Usage) *Run {
	t.Helper()
	run := Replay(t, dial, req, "text.sse")
	events := []llm.Event{{Kind: llm.EventStart}}
	for _, d := range deltas {
		events = append(events, llm.Event{Kind: llm.EventTextDelta, Text: d})
	}
	run.WantEvents(t, events)
	run.WantContent(t, []llm.Block{&llm.TextBlock{Text: strings.Join(deltas, "")}})
	run.WantEnd(t, llm.StopEndTurn, usage)
	return run
}

// InvalidToolArgs checks a call answered with the invalid_args.sse
// fixture, one tool call whose arguments are not a JSON object: the call
// is kept, started and ended, with "{}" as its arguments and an
// ArgsError for the model, and the response stops for tool_use.
func InvalidToolArgs(t *testing.T, dial Dial, req *llm.Request) *Run {
	t.Helper()
	run := Replay(t, dial, req, "invalid_args.sse")
	calls := run.Resp.Message.ToolCalls()
	if len(calls) != 1 || string(calls[0].Args) != "{}" || calls[0].ArgsError == "" || run.Resp.Stop != llm.StopToolUse {
		t.Fatalf("calls = %s stop %q", Dump(run.Resp.Message.Content), run.Resp.Stop)
	}
	if run.Recorder.Count(llm.EventToolStart) != 1 || run.Recorder.Count(llm.EventToolEnd) != 1 {
		t.Fatalf("events = %+v", run.Recorder.Events)
	}
	return run
}

// RetriedOnce checks that a call whose first answer is first (a failure
// before any output) is retried once, after one backoff, and then succeeds
// with the text.sse fixture, whose text is wantText, reporting EventStart
// only once.
func RetriedOnce(t *testing.T, dial Dial, req *llm.Request, first Reply, wantText string) *Run {
	t.Helper()
	run := Stream(t, dial, req, first, Reply{File: "text.sse"})
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
// rate limit naming its delay) waits exactly wantSleep, then succeeds on
// the second request with the text.sse fixture, whose text is wantText,
// reporting EventStart only once.
func RetryAfterHonoured(t *testing.T, dial Dial, req *llm.Request, first Reply, wantSleep time.Duration, wantText string) *Run {
	t.Helper()
	run := Stream(t, dial, req, first, Reply{File: "text.sse"})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	if d := run.Sleeps.Got(); !slices.Equal(d, []time.Duration{wantSleep}) {
		t.Fatalf("sleeps = %v, want [%v]", d, wantSleep)
	}
	if n := len(run.Server.Requests()); n != 2 {
		t.Fatalf("requests = %d, want 2", n)
	}
	if run.Resp.Message.Text() != wantText || run.Recorder.Count(llm.EventStart) != 1 {
		t.Fatalf("response %+v events %+v", run.Resp, run.Recorder.Events)
	}
	return run
}

// NotRetried checks that a call whose first answer is first fails at once
// with exactly want: one request, no backoff, no events, and an assistant
// response that stopped with an error.
func NotRetried(t *testing.T, dial Dial, req *llm.Request, first Reply, want llm.Error) *Run {
	t.Helper()
	run := NotRetriedInStream(t, dial, req, first, want)
	if len(run.Recorder.Events) != 0 {
		t.Fatalf("events %v, want none", run.Recorder.Events)
	}
	return run
}

// NotRetriedInStream checks that a call whose first answer is first (a
// stream that starts, then reports an error no retry can mend) fails with
// exactly want: one request, no backoff, and an assistant response that
// stopped with an error.
func NotRetriedInStream(t *testing.T, dial Dial, req *llm.Request, first Reply, want llm.Error) *Run {
	t.Helper()
	run := Stream(t, dial, req, first, Reply{File: "text.sse"})
	var le *llm.Error
	if !errors.As(run.Err, &le) {
		t.Fatalf("err = %v", run.Err)
	}
	if *le != want {
		t.Fatalf("err = %#v, want %#v", *le, want)
	}
	if len(run.Server.Requests()) != 1 || len(run.Sleeps.Got()) != 0 || run.Resp == nil || run.Resp.Stop != llm.StopError || run.Resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("requests %d sleeps %v resp %+v", len(run.Server.Requests()), run.Sleeps.Got(), run.Resp)
	}
	return run
}

// ErrorAfterOutput checks that a call whose first answer is first (an
// error event in the stream after some output, wantText) fails with a
// retryable *llm.Error that has no HTTP status, without a retry, keeping
// the text in a response that stopped with an error. The caller checks
// the error's kind and message with Run.ProviderError.
func ErrorAfterOutput(t *testing.T, dial Dial, req *llm.Request, first Reply, wantText string) *Run {
	t.Helper()
	run := Stream(t, dial, req, first, Reply{File: "text.sse"})
	if le := run.ProviderError(); le == nil || !le.Retryable || le.Status != 0 {
		t.Fatalf("err = %#v, want a retryable provider error without a status", run.Err)
	}
	if len(run.Server.Requests()) != 1 || run.Resp.Stop != llm.StopError || run.Resp.Message.Text() != wantText {
		t.Fatalf("requests %d response %s stop %q", len(run.Server.Requests()), Dump(run.Resp.Message.Content), run.Resp.Stop)
	}
	return run
}

// GivesUp checks that a call answered with reply every time fails with a
// retryable *llm.Error after exactly attempts requests, with a backoff
// between each two, in a response that stopped with an error. dial must
// make at most attempts attempts ([Open.AttemptsDial]). The caller checks
// the error's kind and message with Run.ProviderError.
func GivesUp(t *testing.T, dial Dial, req *llm.Request, reply Reply, attempts int) *Run {
	t.Helper()
	run := Stream(t, dial, req, reply)
	if le := run.ProviderError(); le == nil || !le.Retryable {
		t.Fatalf("err = %#v, want a retryable provider error", run.Err)
	}
	if len(run.Server.Requests()) != attempts || len(run.Sleeps.Got()) != attempts-1 || run.Resp == nil || run.Resp.Stop != llm.StopError {
		t.Fatalf("%d requests, sleeps %v, response %+v; want %d requests", len(run.Server.Requests()), run.Sleeps.Got(), run.Resp, attempts)
	}
	return run
}

// CutStream checks that a stream cut after output (the cut.sse fixture)
// fails with a retryable stream_cut error without a retry, keeping the
// text received, wantText, and no unfinished tool call, in a response that
// stopped with an error. The error is returned as Run.Err, an *llm.Error.
func CutStream(t *testing.T, dial Dial, req *llm.Request, wantText string) *Run {
	t.Helper()
	run := Stream(t, dial, req, Reply{File: "cut.sse"})
	if le := run.ProviderError(); le == nil || le.Kind != "stream_cut" || !le.Retryable {
		t.Fatalf("err = %#v, want a retryable stream_cut", run.Err)
	}
	if len(run.Server.Requests()) != 1 || run.Resp.Message.Text() != wantText || len(run.Resp.Message.ToolCalls()) != 0 || run.Resp.Stop != llm.StopError {
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
