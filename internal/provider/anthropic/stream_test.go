package anthropic

import (
	"encoding/json"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestTextOnly(t *testing.T) {
	run := providertest.TextOnly(t, dial, simpleRequest(), []string{"Hello", ", world!"}, llm.Usage{Input: 25, Output: 15, CacheRead: 2000, CacheWrite: 100})
	r := run.Server.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "test-key" ||
		r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request path %q headers %v", r.Path, r.Header)
	}
}

func TestThinkingAndToolUse(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "thinking_tool.sse")
	run.WantEvents(t, []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventThinkingDelta, Text: "The user wants the weather. "},
		{Kind: llm.EventThinkingDelta, Text: "I should call get_weather."},
		{Kind: llm.EventTextDelta, Text: "Let me check."},
		{Kind: llm.EventToolStart, ToolID: "toolu_01A", ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: "toolu_01A", Text: `{"location": "San Fra`},
		{Kind: llm.EventToolArgsDelta, ToolID: "toolu_01A", Text: `ncisco, CA", "unit": `},
		{Kind: llm.EventToolArgsDelta, ToolID: "toolu_01A", Text: `"celsius"}`},
		{Kind: llm.EventToolEnd, ToolID: "toolu_01A"},
		{Kind: llm.EventToolStart, ToolID: "toolu_01B", ToolName: "get_time"},
		{Kind: llm.EventToolEnd, ToolID: "toolu_01B"},
	})
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Text: "The user wants the weather. I should call get_weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
		&llm.TextBlock{Text: "Let me check."},
		&llm.ToolCallBlock{ID: "toolu_01A", Name: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius"}`)},
		&llm.ToolCallBlock{ID: "toolu_01B", Name: "get_time", Args: json.RawMessage(`{}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 472, Output: 89})
}

func TestRedactedThinking(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "redacted.sse")
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Redacted: true, Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabvwVmy3wQ=="},
		&llm.TextBlock{Text: "Done."},
	})
	if run.Resp.Stop != llm.StopLength {
		t.Fatalf("stop = %q, want length (max_tokens)", run.Resp.Stop)
	}
	if run.Recorder.Count(llm.EventThinkingDelta) != 0 || run.Recorder.Count(llm.EventTextDelta) != 2 {
		t.Fatalf("events = %+v", run.Recorder.Events)
	}
}

func TestOverloadedBeforeOutputIsRetried(t *testing.T) {
	run := providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{File: "overloaded_early.sse"}, "Hello, world!")
	if run.Resp.Usage.Output != 15 {
		t.Fatalf("response = %+v", run.Resp)
	}
}

func TestOverloadedAfterOutputIsNotRetried(t *testing.T) {
	run := providertest.ErrorAfterOutput(t, dial, simpleRequest(), providertest.Reply{File: "overloaded_late.sse"}, "Partial answer")
	if le := run.ProviderError(); le.Kind != "overloaded_error" || le.Message != "Overloaded" {
		t.Fatalf("err = %#v", le)
	}
}

func TestOverloadedEveryTimeGivesUp(t *testing.T) {
	providertest.GivesUp(t, providertest.Open(open).AttemptsDial(3), simpleRequest(), providertest.Reply{File: "overloaded_early.sse"}, 3)
}

func TestRateLimitThenSuccess(t *testing.T) {
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, File: "error_429.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 2*time.Second, "Hello, world!")
}

func TestUnauthorizedNotRetried(t *testing.T) {
	want := llm.Error{Provider: "anthropic", Status: 401, Kind: "authentication_error", Message: "invalid x-api-key"}
	providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 401, File: "error_401.json"}, want)
}

func TestCutStream(t *testing.T) {
	providertest.CutStream(t, dial, simpleRequest(), "Half a sent")
}

func TestInvalidToolArgs(t *testing.T) {
	providertest.InvalidToolArgs(t, dial, simpleRequest())
}

func TestCancelMidStream(t *testing.T) {
	head := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"streaming\"}}\n\n"
	providertest.CancelMidStream(t, dial, simpleRequest(), head, "streaming")
}

func TestStopReasons(t *testing.T) {
	providertest.StopReasons(t, stopReason, map[string]llm.StopReason{
		"end_turn":                      llm.StopEndTurn,
		"stop_sequence":                 llm.StopEndTurn,
		"pause_turn":                    llm.StopEndTurn,
		"refusal":                       llm.StopEndTurn,
		"tool_use":                      llm.StopToolUse,
		"max_tokens":                    llm.StopLength,
		"model_context_window_exceeded": llm.StopLength,
	})
}

func TestEndpoint(t *testing.T) {
	tests := map[string]string{
		"":                                "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com":       "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/":      "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/v1":    "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/v1/":   "https://api.anthropic.com/v1/messages",
		"http://proxy.local:8080/claude":  "http://proxy.local:8080/claude/v1/messages",
		"http://proxy.local/v1/messages/": "http://proxy.local/v1/messages",
	}
	for in, want := range tests {
		if got := endpoint(in); got != want {
			t.Errorf("endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseURLWithV1HitsMessages(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "text.sse"})
	if _, err := New(Config{BaseURL: srv.URL + "/v1/"}).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[0]; r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "" {
		t.Fatalf("path %q, x-api-key %q", r.Path, r.Header.Get("X-Api-Key"))
	}
}
