package responses

import (
	"errors"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestFailedEventBeforeOutputIsRetried(t *testing.T) {
	run := providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{File: "failed_early.sse"}, "Hello there!")
	if run.Resp.Stop != llm.StopEndTurn {
		t.Fatalf("response = %s stop %q", providertest.Dump(run.Resp.Message.Content), run.Resp.Stop)
	}
}

func TestFailedEventEveryTimeGivesUp(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "failed_early.sse"})
	sl := &providertest.Sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 3)})
	_, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "server_error" || le.Message != "The model failed to generate a response." || !le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 3 || len(sl.Got()) != 2 {
		t.Fatalf("%d requests, %d sleeps", len(srv.Requests()), len(sl.Got()))
	}
}

func TestErrorEventAfterOutputIsNotRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "error_late.sse"}, providertest.Reply{File: "text.sse"})
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "server_error" || !le.Retryable || le.Status != 0 ||
		le.Message != "The server had an error while processing your request." {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 1 || resp.Stop != llm.StopError || resp.Message.Text() != "Partial" {
		t.Fatalf("requests %d response %s stop %q", len(srv.Requests()), providertest.Dump(resp.Message.Content), resp.Stop)
	}
}

func TestFatalErrorEventNotRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "error_fatal.sse"}, providertest.Reply{File: "text.sse"})
	sl := &providertest.Sleeps{}
	_, err := testProvider(srv.Server, sl).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "context_length_exceeded" || le.Retryable ||
		le.Message != "Your input exceeds the context window of this model." {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 1 || len(sl.Got()) != 0 {
		t.Fatalf("%d requests, %d sleeps", len(srv.Requests()), len(sl.Got()))
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, File: "error_429.json"}
	run := providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 2*time.Second, "Hello there!")
	if n := len(run.Server.Requests()); n != 2 {
		t.Fatalf("requests = %d, want 2", n)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{Status: 500, File: "error_500.json"}, "Hello there!")
}

func TestServerErrorEveryTime(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: 500, File: "error_500.json"})
	sl := &providertest.Sleeps{}
	p := New(Config{APIKey: "test-key", BaseURL: srv.URL, Options: transportOptions(sl, 2)})
	resp, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 500 || le.Kind != "server_error" || !le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 2 || resp.Stop != llm.StopError {
		t.Fatalf("%d requests, stop %q", len(srv.Requests()), resp.Stop)
	}
}

func TestUnauthorizedNotRetried(t *testing.T) {
	want := llm.Error{Provider: "openai-responses", Status: 401, Kind: "invalid_api_key",
		Message: "Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys."}
	run := providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 401, File: "error_401.json"}, want)
	if run.Resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("response = %+v", run.Resp)
	}
}

func TestCutStream(t *testing.T) {
	// Output was reported, so the call is not re-issued; the unfinished
	// call is left out and the text received is kept.
	run := providertest.CutStream(t, dial, simpleRequest(), "Half a sent")
	if le := run.ProviderError(); !le.Retryable || len(run.Resp.Message.ToolCalls()) != 0 {
		t.Fatalf("err %#v partial %s", run.Err, providertest.Dump(run.Resp.Message.Content))
	}
}

func TestCutBeforeOutputIsRetried(t *testing.T) {
	head := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n"
	providertest.CutBeforeOutputIsRetried(t, dial, simpleRequest(), head, "Hello there!")
}

func TestStalledStreamHitsIdleTimeout(t *testing.T) {
	head := "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"item_id\":\"msg_1\",\"delta\":\"waiting\"}\n\n"
	providertest.StalledStreamHitsIdleTimeout(t, idleDial, simpleRequest(), head, "waiting")
}

func TestStallBeforeOutputIsRetried(t *testing.T) {
	providertest.StallBeforeOutputIsRetried(t, idleDial, simpleRequest(), "Hello there!")
}

func TestCancelBeforeHeaders(t *testing.T) {
	providertest.CancelBeforeHeaders(t, dial, simpleRequest())
}

func TestCancelMidStream(t *testing.T) {
	head := "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"item_id\":\"msg_1\",\"delta\":\"streaming\"}\n\n"
	providertest.CancelMidStream(t, dial, simpleRequest(), head, "streaming")
}
