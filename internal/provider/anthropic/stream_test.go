package anthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
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
		&llm.ThinkingBlock{Provider: "anthropic", Text: "The user wants the weather. I should call get_weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", Model: "claude-test"},
		&llm.TextBlock{Text: "Let me check."},
		&llm.ToolCallBlock{ID: "toolu_01A", Name: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius"}`)},
		&llm.ToolCallBlock{ID: "toolu_01B", Name: "get_time", Args: json.RawMessage(`{}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 472, Output: 89})
}

func TestRedactedThinking(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "redacted.sse")
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Redacted: true, Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabvwVmy3wQ==", Model: "claude-test"},
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
		"refusal":                       llm.StopRefusal,
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

// The fixtures below follow the stream events of @anthropic-ai/sdk 1.12.0
// (src/resources/messages/messages.ts): RawMessageDeltaEvent, whose delta
// carries stop_reason and stop_details (RefusalStopDetails {type:"refusal",
// category, explanation}); ServerToolUseBlock {type:"server_tool_use", id,
// name, input, caller}; WebSearchToolResultBlock; CitationsDelta.

func TestRefusal(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "refusal.sse")
	if run.Resp.Stop != llm.StopRefusal || run.Resp.Reason != "This request was declined because it could enable cyber harm." {
		t.Fatalf("stop %q reason %q", run.Resp.Stop, run.Resp.Reason)
	}
	run.WantContent(t, []llm.Block{&llm.TextBlock{Text: "Here is how to"}})
	if run.Resp.Usage.Output != 6 {
		t.Fatalf("usage %+v", run.Resp.Usage)
	}
}

// TestServerToolBlocksAreSkipped: a server tool's block, its input deltas,
// its result block, a citation delta and a block type not yet invented
// report nothing (no tool events with an empty id) and stay out of the
// answer; the text around them is kept.
func TestServerToolBlocksAreSkipped(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "server_tool.sse")
	run.WantEvents(t, []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventTextDelta, Text: "Found it."},
	})
	run.WantContent(t, []llm.Block{&llm.TextBlock{Text: "Found it."}})
	run.WantEnd(t, llm.StopEndTurn, llm.Usage{Input: 50, Output: 20})
}

// TestToolCallCutByMaxTokens: a tool call whose arguments the output limit
// cut is kept, marked as cut with arguments {} and a message for the
// model, and the answer stops for length, not tool_use.
func TestToolCallCutByMaxTokens(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "max_tokens_tool.sse")
	calls := run.Resp.Message.ToolCalls()
	if len(calls) != 1 || !calls[0].Cut || string(calls[0].Args) != "{}" || !strings.Contains(calls[0].ArgsError, "max_tokens") {
		t.Fatalf("calls = %s", providertest.Dump(run.Resp.Message.Content))
	}
	if run.Resp.Stop != llm.StopLength || run.Resp.Reason != llm.CutReason || run.Resp.Message.Text() != "Writing the file." {
		t.Fatalf("stop %q reason %q text %q", run.Resp.Stop, run.Resp.Reason, run.Resp.Message.Text())
	}
}

// TestToolCallNeverStoppedAtMaxTokens: a tool_use block that never got
// its content_block_stop before the message ended at max_tokens is kept
// as cut rather than dropped.
func TestToolCallNeverStoppedAtMaxTokens(t *testing.T) {
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"write\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := providertest.HandlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	})
	resp, err := dial(srv, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if resp.Stop != llm.StopLength || len(calls) != 1 || !calls[0].Cut || calls[0].ID != "toolu_9" {
		t.Fatalf("stop %q content %s", resp.Stop, providertest.Dump(resp.Message.Content))
	}
}

// TestOverloadedWithRetryAfter: a 529 overloaded_error (ErrorType
// "overloaded_error" of @anthropic-ai/sdk 1.12.0) is retried after the
// delay its retry-after header names.
func TestOverloadedWithRetryAfter(t *testing.T) {
	first := providertest.Reply{Status: 529, Header: map[string]string{"Retry-After": "3"}, File: "error_529.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 3*time.Second, "Hello, world!")
}

// TestShouldRetryHeader: the server's x-should-retry decides, as in the
// SDK's shouldRetry (src/client.ts): a 400 it marks "true" is retried.
func TestShouldRetryHeader(t *testing.T) {
	first := providertest.Reply{Status: 400, Header: map[string]string{"X-Should-Retry": "true"}, File: "error_400.json"}
	providertest.RetriedOnce(t, dial, simpleRequest(), first, "Hello, world!")
	no := providertest.Reply{Status: 529, Header: map[string]string{"X-Should-Retry": "false"}, File: "error_529.json"}
	providertest.NotRetried(t, dial, simpleRequest(), no, llm.Error{Provider: "anthropic", Status: 529, Kind: "overloaded_error", Message: "Overloaded"})
}

// TestContextWindowExceeded: stop_reason model_context_window_exceeded
// (StopReason of @anthropic-ai/sdk 1.14.0) is a length stop that says the
// context window, not the output limit, was filled, so the agent compacts.
func TestContextWindowExceeded(t *testing.T) {
	a := newAssembler(func(llm.Event) {})
	a.stop, a.done = "model_context_window_exceeded", true
	resp := a.Response()
	if resp.Stop != llm.StopLength || !resp.ContextFull || resp.Reason != llm.ContextFullReason {
		t.Fatalf("stop %q full %v reason %q", resp.Stop, resp.ContextFull, resp.Reason)
	}
	a = newAssembler(func(llm.Event) {})
	a.stop, a.done = "max_tokens", true
	if resp := a.Response(); resp.ContextFull {
		t.Fatal("max_tokens taken for a full context window")
	}
}
