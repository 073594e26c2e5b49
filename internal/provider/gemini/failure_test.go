package gemini

import (
	"errors"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestErrorChunkBeforeOutputIsRetried(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{File: "error_early.sse"}, "Hello there!")
}

func TestErrorChunkAfterOutputIsNotRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "error_late.sse"}, providertest.Reply{File: "text.sse"})
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "UNAVAILABLE" || le.Message != "The model is overloaded. Please try again later." || !le.Retryable || le.Status != 0 {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 1 || resp.Stop != llm.StopError || resp.Message.Text() != "Partial" || resp.Usage.Input != 10 {
		t.Fatalf("requests %d response %+v", len(srv.Requests()), resp)
	}
}

func TestMalformedCallIsRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "malformed.sse"}, providertest.Reply{File: "gemini3_tools.sse"})
	sl := &providertest.Sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 2 || len(resp.Message.ToolCalls()) != 2 || resp.Stop != llm.StopToolUse {
		t.Fatalf("requests %d response %s", len(srv.Requests()), providertest.Dump(resp.Message.Content))
	}
}

func TestMalformedCallEveryTimeGivesUp(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "malformed.sse"})
	sl := &providertest.Sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 2)})
	resp, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "MALFORMED_FUNCTION_CALL" || le.Message != "Malformed function call: print(default_api.read(path=))" {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 2 || len(sl.Got()) != 1 || resp.Stop != llm.StopError {
		t.Fatalf("%d requests, %d sleeps, stop %q", len(srv.Requests()), len(sl.Got()), resp.Stop)
	}
}

func TestRateLimitWithRetryAfterThenSuccess(t *testing.T) {
	// The header wins over the body's retryDelay.
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, File: "error_429.json"}
	run := providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 2*time.Second, "Hello there!")
	if n := len(run.Server.Requests()); n != 2 {
		t.Fatalf("requests = %d, want 2", n)
	}
}

func TestRateLimitWithRetryInfoThenSuccess(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: 429, File: "error_429.json"}, providertest.Reply{File: "text.sse"})
	sl := &providertest.Sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	if d := sl.Got(); len(d) != 1 || d[0] != 37*time.Second {
		t.Fatalf("sleeps = %v, want [37s] from RetryInfo", d)
	}
	if resp.Message.Text() != "Hello there!" {
		t.Fatalf("response %+v", resp)
	}
}

func TestRateLimitEveryTime(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: 429, File: "error_429.json"})
	sl := &providertest.Sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 2)})
	_, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 429 || le.Kind != "RESOURCE_EXHAUSTED" || !le.Retryable || le.RetryAfter != 37*time.Second ||
		le.Message != "You exceeded your current quota, please check your plan and billing details." {
		t.Fatalf("err = %#v", err)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{Status: 500, File: "error_500.json"}, "Hello there!")
}

func TestInvalidKeyNotRetried(t *testing.T) {
	want := llm.Error{Provider: "gemini", Status: 400, Kind: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key."}
	run := providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 400, File: "error_400.json"}, want)
	if run.Resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("response = %+v", run.Resp)
	}
}

func TestCutStream(t *testing.T) {
	run := providertest.CutStream(t, dial, simpleRequest(), "Half a sentence")
	if le := run.ProviderError(); !le.Retryable {
		t.Fatalf("err = %#v, want retryable", le)
	}
}

func TestCutBeforeOutputIsRetried(t *testing.T) {
	providertest.CutBeforeOutputIsRetried(t, dial, simpleRequest(), `data: {"usageMetadata":{"promptTokenCount":3}}`+"\n\n", "Hello there!")
}

func TestStalledStreamHitsIdleTimeout(t *testing.T) {
	providertest.StalledStreamHitsIdleTimeout(t, idleDial, simpleRequest(), `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"waiting"}]}}]}`+"\n\n", "waiting")
}

func TestStallBeforeOutputIsRetried(t *testing.T) {
	providertest.StallBeforeOutputIsRetried(t, idleDial, simpleRequest(), "Hello there!")
}

func TestCancelBeforeHeaders(t *testing.T) {
	providertest.CancelBeforeHeaders(t, dial, simpleRequest())
}

func TestCancelMidStream(t *testing.T) {
	providertest.CancelMidStream(t, dial, simpleRequest(), `data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"streaming"}]}}]}`+"\n\n", "streaming")
}
