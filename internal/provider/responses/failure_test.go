package responses

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/transport"
)

func TestFailedEventBeforeOutputIsRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "failed_early.sse"}, reply{file: "text.sse"})
	rec := &recorder{}
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != 2 || len(sl.got()) != 1 || rec.count(llm.EventStart) != 1 {
		t.Fatalf("requests %d sleeps %v events %+v", len(srv.requests()), sl.got(), rec.events)
	}
	if resp.Message.Text() != "Hello there!" || resp.Stop != llm.StopEndTurn {
		t.Fatalf("response = %s", dump(resp.Message.Content))
	}
}

func TestFailedEventEveryTimeGivesUp(t *testing.T) {
	srv := newFakeServer(t, reply{file: "failed_early.sse"})
	sl := &sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 3)})
	_, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "server_error" || le.Message != "The model failed to generate a response." || !le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 3 || len(sl.got()) != 2 {
		t.Fatalf("%d requests, %d sleeps", len(srv.requests()), len(sl.got()))
	}
}

func TestErrorEventAfterOutputIsNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "error_late.sse"}, reply{file: "text.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "server_error" || !le.Retryable || le.Status != 0 ||
		le.Message != "The server had an error while processing your request." {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 1 || resp.Stop != llm.StopError || resp.Message.Text() != "Partial" {
		t.Fatalf("requests %d response %s stop %q", len(srv.requests()), dump(resp.Message.Content), resp.Stop)
	}
}

func TestFatalErrorEventNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "error_fatal.sse"}, reply{file: "text.sse"})
	sl := &sleeps{}
	_, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "context_length_exceeded" || le.Retryable ||
		le.Message != "Your input exceeds the context window of this model." {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 1 || len(sl.got()) != 0 {
		t.Fatalf("%d requests, %d sleeps", len(srv.requests()), len(sl.got()))
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	srv := newFakeServer(t,
		reply{status: 429, header: map[string]string{"Retry-After": "2"}, file: "error_429.json"},
		reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if d := sl.got(); len(d) != 1 || d[0] != 2*time.Second {
		t.Fatalf("sleeps = %v, want [2s]", d)
	}
	if resp.Message.Text() != "Hello there!" || rec.count(llm.EventStart) != 1 || len(srv.requests()) != 2 {
		t.Fatalf("response %+v events %+v", resp, rec.events)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	srv := newFakeServer(t, reply{status: 500, file: "error_500.json"}, reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(sl.got()) != 1 || len(srv.requests()) != 2 || rec.count(llm.EventStart) != 1 || resp.Message.Text() != "Hello there!" {
		t.Fatalf("sleeps %v requests %d events %+v", sl.got(), len(srv.requests()), rec.events)
	}
}

func TestServerErrorEveryTime(t *testing.T) {
	srv := newFakeServer(t, reply{status: 500, file: "error_500.json"})
	sl := &sleeps{}
	p := New(Config{APIKey: "test-key", BaseURL: srv.URL, Options: transportOptions(sl, 2)})
	resp, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 500 || le.Kind != "server_error" || !le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 2 || resp.Stop != llm.StopError {
		t.Fatalf("%d requests, stop %q", len(srv.requests()), resp.Stop)
	}
}

func TestUnauthorizedNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{status: 401, file: "error_401.json"}, reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	want := llm.Error{Provider: "openai-responses", Status: 401, Kind: "invalid_api_key",
		Message: "Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys."}
	if *le != want {
		t.Fatalf("err = %#v", *le)
	}
	if len(srv.requests()) != 1 || len(sl.got()) != 0 || len(rec.events) != 0 || resp.Stop != llm.StopError || resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("requests %d sleeps %v events %v resp %+v", len(srv.requests()), sl.got(), rec.events, resp)
	}
}

func TestCutStream(t *testing.T) {
	srv := newFakeServer(t, reply{file: "cut.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "stream_cut" || !le.Retryable {
		t.Fatalf("err = %#v, want stream_cut", err)
	}
	// Output was reported, so the call is not re-issued; the unfinished
	// call is left out and the text received is kept.
	if len(srv.requests()) != 1 || resp.Message.Text() != "Half a sent" || len(resp.Message.ToolCalls()) != 0 || resp.Stop != llm.StopError {
		t.Fatalf("requests %d partial %s stop %q", len(srv.requests()), dump(resp.Message.Content), resp.Stop)
	}
}

func TestCutBeforeOutputIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) == 1 {
			io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n")
			return
		}
		w.Write(fixture(t, "text.sse"))
	})
	rec := &recorder{}
	resp, err := testProvider(srv, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil || resp.Message.Text() != "Hello there!" || n.Load() != 2 || rec.count(llm.EventStart) != 1 {
		t.Fatalf("err %v response %s after %d requests", err, dump(resp.Message.Content), n.Load())
	}
}

func TestStalledStreamHitsIdleTimeout(t *testing.T) {
	srv := handlerServer(t, stall("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\"}}\n\n"+
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"item_id\":\"msg_1\",\"delta\":\"waiting\"}\n\n"))
	p := New(Config{BaseURL: srv.URL, Options: transport.Options{IdleTimeout: 100 * time.Millisecond, Sleep: (&sleeps{}).sleep}})
	var resp *llm.Response
	var err error
	runAsync(t, func() { resp, err = p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink) })
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "idle_timeout" || !le.Retryable {
		t.Fatalf("err = %#v, want idle_timeout", err)
	}
	if resp.Stop != llm.StopError || resp.Message.Text() != "waiting" {
		t.Fatalf("response = %s stop %q", dump(resp.Message.Content), resp.Stop)
	}
}

func TestStallBeforeOutputIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			stall("")(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(fixture(t, "text.sse"))
	})
	p := New(Config{BaseURL: srv.URL, Options: transport.Options{IdleTimeout: 100 * time.Millisecond, Sleep: (&sleeps{}).sleep}})
	var resp *llm.Response
	var err error
	runAsync(t, func() { resp, err = p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink) })
	if err != nil || resp.Message.Text() != "Hello there!" || n.Load() != 2 {
		t.Fatalf("err %v response %+v after %d requests", err, resp, n.Load())
	}
}

func TestCancelBeforeHeaders(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(hangGuard(t))
	defer cancel()
	go func() { // ends when the request arrives or the test's deferred cancel runs
		select {
		case <-arrived:
			cancel()
		case <-ctx.Done():
		}
	}()
	rec := &recorder{}
	var resp *llm.Response
	var err error
	runAsync(t, func() { resp, err = testProvider(srv, &sleeps{}).Stream(ctx, simpleRequest(), rec.sink) })
	if !errors.Is(err, context.Canceled) || resp.Stop != llm.StopAborted || len(rec.events) != 0 || len(resp.Message.Content) != 0 {
		t.Fatalf("err %v response %+v events %+v", err, resp, rec.events)
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := handlerServer(t, stall("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\"}}\n\n"+
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"item_id\":\"msg_1\",\"delta\":\"streaming\"}\n\n"))
	ctx, cancel := context.WithCancel(hangGuard(t))
	defer cancel()
	sink := func(ev llm.Event) {
		if ev.Kind == llm.EventTextDelta {
			cancel()
		}
	}
	var resp *llm.Response
	var err error
	runAsync(t, func() { resp, err = testProvider(srv, &sleeps{}).Stream(ctx, simpleRequest(), sink) })
	if err != context.Canceled || resp.Stop != llm.StopAborted || resp.Message.Text() != "streaming" {
		t.Fatalf("err %v response %+v", err, resp)
	}
}
