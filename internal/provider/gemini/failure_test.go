package gemini

import (
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestErrorChunkBeforeOutputIsRetried(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{File: "error_early.sse"}, "Hello there!")
}

func TestErrorChunkAfterOutputIsNotRetried(t *testing.T) {
	run := providertest.ErrorAfterOutput(t, dial, simpleRequest(), providertest.Reply{File: "error_late.sse"}, "Partial")
	if le := run.ProviderError(); le.Kind != "UNAVAILABLE" || le.Message != "The model is overloaded. Please try again later." || run.Resp.Usage.Input != 10 {
		t.Fatalf("err = %#v usage %+v", le, run.Resp.Usage)
	}
}

func TestMalformedCallIsRetried(t *testing.T) {
	run := providertest.Stream(t, dial, simpleRequest(), providertest.Reply{File: "malformed.sse"}, providertest.Reply{File: "gemini3_tools.sse"})
	if run.Err != nil {
		t.Fatal(run.Err)
	}
	if len(run.Server.Requests()) != 2 || len(run.Resp.Message.ToolCalls()) != 2 || run.Resp.Stop != llm.StopToolUse {
		t.Fatalf("requests %d response %s", len(run.Server.Requests()), providertest.Dump(run.Resp.Message.Content))
	}
}

func TestMalformedCallEveryTimeGivesUp(t *testing.T) {
	run := providertest.GivesUp(t, providertest.Open(open).AttemptsDial(2), simpleRequest(), providertest.Reply{File: "malformed.sse"}, 2)
	if le := run.ProviderError(); le.Kind != "MALFORMED_FUNCTION_CALL" || le.Message != "Malformed function call: print(default_api.read(path=))" {
		t.Fatalf("err = %#v", le)
	}
}

func TestRateLimitWithRetryAfterThenSuccess(t *testing.T) {
	// The header wins over the body's retryDelay.
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, File: "error_429.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 2*time.Second, "Hello there!")
}

func TestRateLimitWithRetryInfoThenSuccess(t *testing.T) {
	// No Retry-After header: the delay is the body's RetryInfo.
	first := providertest.Reply{Status: 429, File: "error_429.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 37*time.Second, "Hello there!")
}

func TestRateLimitEveryTime(t *testing.T) {
	run := providertest.GivesUp(t, providertest.Open(open).AttemptsDial(2), simpleRequest(), providertest.Reply{Status: 429, File: "error_429.json"}, 2)
	if le := run.ProviderError(); le.Status != 429 || le.Kind != "RESOURCE_EXHAUSTED" || le.RetryAfter != 37*time.Second ||
		le.Message != "You exceeded your current quota, please check your plan and billing details." {
		t.Fatalf("err = %#v", le)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{Status: 500, File: "error_500.json"}, "Hello there!")
}

func TestInvalidKeyNotRetried(t *testing.T) {
	want := llm.Error{Provider: "gemini", Status: 400, Kind: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key."}
	providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 400, File: "error_400.json"}, want)
}

func TestCutStream(t *testing.T) {
	providertest.CutStream(t, dial, simpleRequest(), "Half a sentence")
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
