package responses

import (
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
	run := providertest.GivesUp(t, providertest.Open(open).AttemptsDial(3), simpleRequest(), providertest.Reply{File: "failed_early.sse"}, 3)
	if le := run.ProviderError(); le.Kind != "server_error" || le.Message != "The model failed to generate a response." {
		t.Fatalf("err = %#v", le)
	}
}

func TestErrorEventAfterOutputIsNotRetried(t *testing.T) {
	run := providertest.ErrorAfterOutput(t, dial, simpleRequest(), providertest.Reply{File: "error_late.sse"}, "Partial")
	if le := run.ProviderError(); le.Kind != "server_error" || le.Message != "The server had an error while processing your request." {
		t.Fatalf("err = %#v", le)
	}
}

func TestFatalErrorEventNotRetried(t *testing.T) {
	want := llm.Error{Provider: "openai-responses", Kind: "context_length_exceeded", Message: "Your input exceeds the context window of this model."}
	providertest.NotRetriedInStream(t, dial, simpleRequest(), providertest.Reply{File: "error_fatal.sse"}, want)
}

func TestRateLimitThenSuccess(t *testing.T) {
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, File: "error_429.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 2*time.Second, "Hello there!")
}

func TestServerErrorThenSuccess(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{Status: 500, File: "error_500.json"}, "Hello there!")
}

func TestServerErrorEveryTime(t *testing.T) {
	run := providertest.GivesUp(t, providertest.Open(open).AttemptsDial(2), simpleRequest(), providertest.Reply{Status: 500, File: "error_500.json"}, 2)
	if le := run.ProviderError(); le.Status != 500 || le.Kind != "server_error" {
		t.Fatalf("err = %#v", le)
	}
}

func TestUnauthorizedNotRetried(t *testing.T) {
	want := llm.Error{Provider: "openai-responses", Status: 401, Kind: "invalid_api_key",
		Message: "Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys."}
	providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 401, File: "error_401.json"}, want)
}

func TestCutStream(t *testing.T) {
	// Output was reported, so the call is not re-issued; the unfinished
	// call is left out and the text received is kept.
	providertest.CutStream(t, dial, simpleRequest(), "Half a sent")
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
