package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestTextOnly(t *testing.T) {
	run := providertest.TextOnly(t, dial, simpleRequest(), []string{"Hello", " there!"}, llm.Usage{Input: 176, Output: 7, CacheRead: 1024})
	r := run.Server.Requests()[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("path %q headers %v", r.Path, r.Header)
	}
}

func TestReasoningAndParallelToolCalls(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "reasoning_tools.sse")
	run.WantEvents(t, []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventThinkingDelta, Text: "Need the weather "},
		{Kind: llm.EventThinkingDelta, Text: "in two cities."},
		{Kind: llm.EventTextDelta, Text: "Checking both."},
		{Kind: llm.EventToolStart, ToolID: "call_paris", ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_paris", Text: `{"city":`},
		{Kind: llm.EventToolStart, ToolID: "call_rome", ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_rome", Text: `{"city"`},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_paris", Text: `"Paris"}`},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_rome", Text: `:"Rome"}`},
		{Kind: llm.EventToolEnd, ToolID: "call_paris"},
		{Kind: llm.EventToolEnd, ToolID: "call_rome"},
	})
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "openai", Text: "Need the weather in two cities.", ID: "reasoning_content"},
		&llm.TextBlock{Text: "Checking both."},
		&llm.ToolCallBlock{ID: "call_paris", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
		&llm.ToolCallBlock{ID: "call_rome", Name: "get_weather", Args: json.RawMessage(`{"city":"Rome"}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 44, Output: 60, CacheRead: 256})
}

func TestOpenRouterReasoningField(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "openrouter_reasoning.sse"})
	p := New(Config{BaseURL: srv.URL + "/api/v1/", Name: "openrouter", Headers: map[string]string{"HTTP-Referer": "https://zot.dev", "X-Title": "zot"}})
	resp, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "openrouter", Text: "Short thought.", ID: "reasoning"},
		&llm.TextBlock{Text: "Answer."},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopLength || resp.Usage != (llm.Usage{Input: 10, Output: 20}) || p.Name() != "openrouter" {
		t.Fatalf("stop %q usage %+v name %q", resp.Stop, resp.Usage, p.Name())
	}
	r := srv.Requests()[0]
	if r.Path != "/api/v1/chat/completions" || r.Header.Get("Authorization") != "" ||
		r.Header.Get("HTTP-Referer") != "https://zot.dev" || r.Header.Get("X-Title") != "zot" {
		t.Fatalf("path %q headers %v", r.Path, r.Header)
	}
}

func TestToolCallsWithFinishStop(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "tools_finish_stop.sse")
	calls := run.Resp.Message.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "call_ls" || calls[0].Name != "bash" || string(calls[0].Args) != `{"command": "ls"}` {
		t.Fatalf("calls = %s", providertest.Dump(run.Resp.Message.Content))
	}
	if run.Resp.Stop != llm.StopToolUse {
		t.Fatalf("stop = %q, want tool_use", run.Resp.Stop)
	}
	if run.Recorder.Count(llm.EventToolStart) != 1 || run.Recorder.Count(llm.EventToolEnd) != 1 {
		t.Fatalf("events = %+v", run.Recorder.Events)
	}
}

func TestErrorChunkBeforeOutputIsRetried(t *testing.T) {
	providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{File: "error_early.sse"}, "Hello there!")
}

func TestErrorChunkAfterOutputIsNotRetried(t *testing.T) {
	run := providertest.ErrorAfterOutput(t, dial, simpleRequest(), providertest.Reply{File: "error_late.sse"}, "Partial")
	if le := run.ProviderError(); le.Message != "Provider returned error" {
		t.Fatalf("err = %#v", le)
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After-Ms": "1500"}, File: "error_429.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 1500*time.Millisecond, "Hello there!")
}

func TestUnauthorizedNotRetried(t *testing.T) {
	want := llm.Error{Provider: "openai", Status: 401, Kind: "invalid_request_error",
		Message: "Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys."}
	providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 401, File: "error_401.json"}, want)
}

func TestCutStream(t *testing.T) {
	providertest.CutStream(t, dial, simpleRequest(), "Half a sent")
}

func TestInvalidToolArgs(t *testing.T) {
	providertest.InvalidToolArgs(t, dial, simpleRequest())
}

func TestToolFragmentsWithoutIndexOrID(t *testing.T) {
	a := newAssembler("openai", func(llm.Event) {})
	zero := 0
	// A server that numbers every call 0 but gives each its own id.
	a.toolFragment(&zero, "a", "one", `{"x":1}`)
	a.toolFragment(&zero, "b", "two", `{"y":`)
	a.toolFragment(&zero, "", "", `2}`)
	// A server that sends no index and no id.
	a.toolFragment(nil, "", "three", `{}`)
	a.endCalls()
	calls := a.Response().Message.ToolCalls()
	got := []string{}
	for _, c := range calls {
		got = append(got, c.ID+" "+c.Name+" "+string(c.Args))
	}
	want := []string{`a one {"x":1}`, `b two {"y":2}`, `call_2 three {}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
}

func TestCancelMidStream(t *testing.T) {
	providertest.CancelMidStream(t, dial, simpleRequest(), `data: {"choices":[{"index":0,"delta":{"content":"streaming"}}]}`+"\n\n", "streaming")
}

func TestStopReasons(t *testing.T) {
	providertest.StopReasons(t, stopReason, map[string]llm.StopReason{
		"stop":           llm.StopEndTurn,
		"tool_calls":     llm.StopToolUse,
		"function_call":  llm.StopToolUse,
		"length":         llm.StopLength,
		"content_filter": llm.StopRefusal,
	})
}

func TestDecodeError(t *testing.T) {
	tests := []struct{ body, kind, msg string }{
		{`{"error":{"message":"m","type":"t","code":"c"}}`, "t", "m"},
		{`{"error":{"message":"m","type":null,"code":"c"}}`, "c", "m"},
		{`{"error":{"message":"m","code":429}}`, "", "m"},
		{`{"error":"plain"}`, "", "plain"},
		{`not json`, "", ""},
		{`{"detail":"x"}`, "", ""},
	}
	for _, tt := range tests {
		kind, msg := decodeError(400, []byte(tt.body))
		if kind != tt.kind || msg != tt.msg {
			t.Errorf("decodeError(%s) = %q, %q; want %q, %q", tt.body, kind, msg, tt.kind, tt.msg)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := map[string]string{
		"":                             "https://api.openai.com/v1/chat/completions",
		"https://api.openai.com/v1":    "https://api.openai.com/v1/chat/completions",
		"https://api.openai.com/v1/":   "https://api.openai.com/v1/chat/completions",
		"https://openrouter.ai/api/v1": "https://openrouter.ai/api/v1/chat/completions",
		"http://localhost:11434/v1/":   "http://localhost:11434/v1/chat/completions",
		"http://localhost:8080/v1/chat/completions": "http://localhost:8080/v1/chat/completions",
	}
	for in, want := range tests {
		if got := endpoint(in); got != want {
			t.Errorf("endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

// The fixtures below follow ChatCompletionChunk of the openai npm package
// 7.57.0 (src/resources/chat/completions/completions.ts): Choice.Delta
// .refusal ("The refusal message generated by the model"), finish_reason
// 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call', and
// CompletionUsage.prompt_tokens_details.cache_write_tokens ("The unadjusted
// number of prompt tokens written to cache", src/resources/completions.ts).

func TestRefusal(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "refusal.sse")
	if run.Resp.Stop != llm.StopRefusal || run.Resp.Reason != "I'm sorry, I can't help with that." {
		t.Fatalf("stop %q reason %q", run.Resp.Stop, run.Resp.Reason)
	}
	// The refusal is shown as it streams.
	if run.Recorder.Count(llm.EventTextDelta) != 2 || run.Resp.Usage != (llm.Usage{Input: 20, Output: 9}) {
		t.Fatalf("events %+v usage %+v", run.Recorder.Events, run.Resp.Usage)
	}
}

func TestContentFilterIsARefusal(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "content_filter.sse")
	if run.Resp.Stop != llm.StopRefusal || run.Resp.Reason != "content_filter" || run.Resp.Message.Text() != "Sure, the first" {
		t.Fatalf("stop %q reason %q text %q", run.Resp.Stop, run.Resp.Reason, run.Resp.Message.Text())
	}
}

func TestCacheWriteTokens(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "cache_write.sse")
	run.WantEnd(t, llm.StopEndTurn, llm.Usage{Input: 976, Output: 7, CacheRead: 1024, CacheWrite: 3000})
}

// TestNoDoneAfterFinishReason: some compatible servers end the body after
// the chunk with finish_reason and never send [DONE]; that is a complete
// answer, and usage they did not send is zero.
func TestNoDoneAfterFinishReason(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "no_done.sse")
	run.WantContent(t, []llm.Block{&llm.TextBlock{Text: "No end marker."}})
	run.WantEnd(t, llm.StopEndTurn, llm.Usage{})
}

func TestToolCallCutByLength(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "length_tool.sse")
	calls := run.Resp.Message.ToolCalls()
	if run.Resp.Stop != llm.StopLength || len(calls) != 1 || !calls[0].Cut || calls[0].ID != "call_big" ||
		!strings.Contains(calls[0].ArgsError, "max_completion_tokens") {
		t.Fatalf("stop %q content %s", run.Resp.Stop, providertest.Dump(run.Resp.Message.Content))
	}
}

// TestDeepSeekToolLoopSendsReasoningBack: DeepSeek's thinking mode needs
// each earlier assistant message of a tool loop to carry its
// reasoning_content, or the second call fails; the reasoning streamed in
// reasoning_content goes back there, and reasoning streamed as
// "reasoning" (OpenRouter) goes back as "reasoning".
func TestDeepSeekToolLoopSendsReasoningBack(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "reasoning_tools.sse"}, providertest.Reply{File: "text.sse"})
	p := New(Config{Name: "deepseek", BaseURL: srv.URL})
	req := simpleRequest()
	first, err := p.Stream(providertest.HangGuard(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var results []llm.Block
	for _, c := range first.Message.ToolCalls() {
		results = append(results, &llm.ToolResultBlock{CallID: c.ID, Name: c.Name, Content: []llm.Block{&llm.TextBlock{Text: "sunny"}}})
	}
	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, Content: results})
	if _, err := p.Stream(providertest.HangGuard(t), req, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	asst := body.Messages[1]
	if string(asst["role"]) != `"assistant"` || string(asst["reasoning_content"]) != `"Need the weather in two cities."` ||
		asst["tool_calls"] == nil || asst["reasoning"] != nil {
		t.Fatalf("assistant message %v", asst)
	}
	// Reasoning of another provider, or with no field to go back in, is
	// not sent.
	req = simpleRequest()
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.ThinkingBlock{Provider: "openrouter", Text: "r1", ID: "reasoning"},
		&llm.ThinkingBlock{Provider: "deepseek", Text: "r2", ID: "reasoning"},
		&llm.ThinkingBlock{Provider: "deepseek", Text: "r3"},
		&llm.TextBlock{Text: "Done."},
	}})
	raw, err := buildRequest(req, "deepseek")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `{"role":"assistant","content":"Done.","reasoning":"r2"}`) {
		t.Fatalf("request %s", raw)
	}
}
