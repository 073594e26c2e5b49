package gemini

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

func TestErrorChunkBeforeOutputIsRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "error_early.sse"}, reply{file: "text.sse"})
	rec := &recorder{}
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != 2 || len(sl.got()) != 1 || rec.count(llm.EventStart) != 1 {
		t.Fatalf("requests %d sleeps %v events %+v", len(srv.requests()), sl.got(), rec.events)
	}
	if resp.Message.Text() != "Hello there!" {
		t.Fatalf("response = %s", dump(resp.Message.Content))
	}
}

func TestErrorChunkAfterOutputIsNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "error_late.sse"}, reply{file: "text.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "UNAVAILABLE" || le.Message != "The model is overloaded. Please try again later." || !le.Retryable || le.Status != 0 {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 1 || resp.Stop != llm.StopError || resp.Message.Text() != "Partial" || resp.Usage.Input != 10 {
		t.Fatalf("requests %d response %+v", len(srv.requests()), resp)
	}
}

func TestMalformedCallIsRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "malformed.sse"}, reply{file: "gemini3_tools.sse"})
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != 2 || len(resp.Message.ToolCalls()) != 2 || resp.Stop != llm.StopToolUse {
		t.Fatalf("requests %d response %s", len(srv.requests()), dump(resp.Message.Content))
	}
}

func TestMalformedCallEveryTimeGivesUp(t *testing.T) {
	srv := newFakeServer(t, reply{file: "malformed.sse"})
	sl := &sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 2)})
	resp, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "MALFORMED_FUNCTION_CALL" || le.Message != "Malformed function call: print(default_api.read(path=))" {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 2 || len(sl.got()) != 1 || resp.Stop != llm.StopError {
		t.Fatalf("%d requests, %d sleeps, stop %q", len(srv.requests()), len(sl.got()), resp.Stop)
	}
}

func TestRateLimitWithRetryAfterThenSuccess(t *testing.T) {
	srv := newFakeServer(t,
		reply{status: 429, header: map[string]string{"Retry-After": "2"}, file: "error_429.json"},
		reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	// The header wins over the body's retryDelay.
	if d := sl.got(); len(d) != 1 || d[0] != 2*time.Second {
		t.Fatalf("sleeps = %v, want [2s]", d)
	}
	if resp.Message.Text() != "Hello there!" || rec.count(llm.EventStart) != 1 || len(srv.requests()) != 2 {
		t.Fatalf("response %+v events %+v", resp, rec.events)
	}
}

func TestRateLimitWithRetryInfoThenSuccess(t *testing.T) {
	srv := newFakeServer(t, reply{status: 429, file: "error_429.json"}, reply{file: "text.sse"})
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	if err != nil {
		t.Fatal(err)
	}
	if d := sl.got(); len(d) != 1 || d[0] != 37*time.Second {
		t.Fatalf("sleeps = %v, want [37s] from RetryInfo", d)
	}
	if resp.Message.Text() != "Hello there!" {
		t.Fatalf("response %+v", resp)
	}
}

func TestRateLimitEveryTime(t *testing.T) {
	srv := newFakeServer(t, reply{status: 429, file: "error_429.json"})
	sl := &sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 2)})
	_, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 429 || le.Kind != "RESOURCE_EXHAUSTED" || !le.Retryable || le.RetryAfter != 37*time.Second ||
		le.Message != "You exceeded your current quota, please check your plan and billing details." {
		t.Fatalf("err = %#v", err)
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

func TestInvalidKeyNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{status: 400, file: "error_400.json"}, reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	want := llm.Error{Provider: "gemini", Status: 400, Kind: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key."}
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
	if len(srv.requests()) != 1 || resp.Message.Text() != "Half a sentence" || resp.Stop != llm.StopError {
		t.Fatalf("requests %d partial %s stop %q", len(srv.requests()), dump(resp.Message.Content), resp.Stop)
	}
}

func TestCutBeforeOutputIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) == 1 {
			io.WriteString(w, `data: {"usageMetadata":{"promptTokenCount":3}}`+"\n\n")
			return
		}
		w.Write(fixture(t, "text.sse"))
	})
	rec := &recorder{}
	resp, err := testProvider(srv, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil || resp.Message.Text() != "Hello there!" || n.Load() != 2 || rec.count(llm.EventStart) != 1 {
		t.Fatalf("err %v response %+v after %d requests", err, resp, n.Load())
	}
}

func TestStalledStreamHitsIdleTimeout(t *testing.T) {
	srv := handlerServer(t, stall(`data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"waiting"}]}}]}`+"\n\n"))
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
	srv := handlerServer(t, stall(`data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"streaming"}]}}]}`+"\n\n"))
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
