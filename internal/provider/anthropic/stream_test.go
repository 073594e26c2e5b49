package anthropic

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestTextOnly(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "text.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventTextDelta, Text: "Hello"},
		{Kind: llm.EventTextDelta, Text: ", world!"},
	}
	if !reflect.DeepEqual(rec.Events, wantEvents) {
		t.Fatalf("events = %+v", rec.Events)
	}
	if resp.Message.Role != llm.RoleAssistant || resp.Message.Text() != "Hello, world!" || len(resp.Message.Content) != 1 {
		t.Fatalf("message = %+v", resp.Message)
	}
	if resp.Stop != llm.StopEndTurn {
		t.Fatalf("stop = %q", resp.Stop)
	}
	if want := (llm.Usage{Input: 25, Output: 15, CacheRead: 2000, CacheWrite: 100}); resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "test-key" ||
		r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request path %q headers %v", r.Path, r.Header)
	}
}

func TestThinkingAndToolUse(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "thinking_tool.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []llm.Event{
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
	}
	if !reflect.DeepEqual(rec.Events, wantEvents) {
		t.Fatalf("events =\n%+v\nwant\n%+v", rec.Events, wantEvents)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Text: "The user wants the weather. I should call get_weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
		&llm.TextBlock{Text: "Let me check."},
		&llm.ToolCallBlock{ID: "toolu_01A", Name: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius"}`)},
		&llm.ToolCallBlock{ID: "toolu_01B", Name: "get_time", Args: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse || resp.Usage != (llm.Usage{Input: 472, Output: 89}) {
		t.Fatalf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
}

func TestRedactedThinking(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "redacted.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Redacted: true, Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabvwVmy3wQ=="},
		&llm.TextBlock{Text: "Done."},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopLength {
		t.Fatalf("stop = %q, want length (max_tokens)", resp.Stop)
	}
	if rec.Count(llm.EventThinkingDelta) != 0 || rec.Count(llm.EventTextDelta) != 2 {
		t.Fatalf("events = %+v", rec.Events)
	}
}

func TestOverloadedBeforeOutputIsRetried(t *testing.T) {
	run := providertest.RetriedOnce(t, dial, simpleRequest(), providertest.Reply{File: "overloaded_early.sse"}, "Hello, world!")
	if run.Resp.Usage.Output != 15 {
		t.Fatalf("response = %+v", run.Resp)
	}
}

func TestOverloadedAfterOutputIsNotRetried(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "overloaded_late.sse"}, providertest.Reply{File: "text.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "overloaded_error" || le.Message != "Overloaded" || !le.Retryable || le.Status != 0 {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("requests = %d, want 1", len(srv.Requests()))
	}
	if resp.Stop != llm.StopError || resp.Message.Text() != "Partial answer" {
		t.Fatalf("partial response = %+v", resp)
	}
}

func TestOverloadedEveryTimeGivesUp(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "overloaded_early.sse"})
	sl := &providertest.Sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 3)})
	_, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if !llm.IsRetryable(err) || len(srv.Requests()) != 3 || len(sl.Got()) != 2 {
		t.Fatalf("err = %v after %d requests, %d sleeps", err, len(srv.Requests()), len(sl.Got()))
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	first := providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "2"}, File: "error_429.json"}
	providertest.RetryAfterHonoured(t, dial, simpleRequest(), first, 2*time.Second, "Hello, world!")
}

func TestUnauthorizedNotRetried(t *testing.T) {
	want := llm.Error{Provider: "anthropic", Status: 401, Kind: "authentication_error", Message: "invalid x-api-key"}
	run := providertest.NotRetried(t, dial, simpleRequest(), providertest.Reply{Status: 401, File: "error_401.json"}, want)
	if run.Resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("response = %+v", run.Resp)
	}
}

func TestCutStream(t *testing.T) {
	run := providertest.CutStream(t, dial, simpleRequest(), "Half a sent")
	// The unfinished tool call is left out; the text received is kept.
	if len(run.Resp.Message.ToolCalls()) != 0 {
		t.Fatalf("partial response = %s", providertest.Dump(run.Resp.Message.Content))
	}
}

func TestInvalidToolArgs(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "invalid_args.sse"})
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || string(calls[0].Args) != "{}" || calls[0].ArgsError == "" {
		t.Fatalf("calls = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse {
		t.Fatalf("stop = %q", resp.Stop)
	}
}

func TestCancelMidStream(t *testing.T) {
	head := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"streaming\"}}\n\n"
	providertest.CancelMidStream(t, dial, simpleRequest(), head, "streaming")
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		in    string
		tools bool
		want  llm.StopReason
	}{
		{"end_turn", false, llm.StopEndTurn},
		{"stop_sequence", false, llm.StopEndTurn},
		{"pause_turn", false, llm.StopEndTurn},
		{"refusal", false, llm.StopEndTurn},
		{"tool_use", false, llm.StopToolUse},
		{"max_tokens", false, llm.StopLength},
		{"model_context_window_exceeded", false, llm.StopLength},
		{"end_turn", true, llm.StopToolUse},
		{"max_tokens", true, llm.StopToolUse},
		{"", false, llm.StopEndTurn},
	}
	for _, tt := range tests {
		if got := stopReason(tt.in, tt.tools); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", tt.in, tt.tools, got, tt.want)
		}
	}
}

func TestToolArgs(t *testing.T) {
	tests := []struct {
		raw, want string
		bad       bool
	}{
		{``, `{}`, false},
		{`  `, `{}`, false},
		{`{"a":1}`, `{"a":1}`, false},
		{` {"a":1} `, `{"a":1}`, false},
		{`{"a":`, `{}`, true},
		{`[1,2]`, `{}`, true},
		{`"text"`, `{}`, true},
		{`{"a":1}{"b":2}`, `{}`, true},
	}
	for _, tt := range tests {
		args, argsErr := llm.ParseToolArgs([]byte(tt.raw))
		if string(args) != tt.want || (argsErr != "") != tt.bad {
			t.Errorf("llm.ParseToolArgs(%q) = %s, %q", tt.raw, args, argsErr)
		}
	}
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
	p := New(Config{BaseURL: srv.URL + "/v1/", Options: transportOptions(&providertest.Sleeps{}, 0)})
	if _, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[0]; r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "" {
		t.Fatalf("path %q, x-api-key %q", r.Path, r.Header.Get("X-Api-Key"))
	}
}
