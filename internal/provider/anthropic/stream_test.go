package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

func TestTextOnly(t *testing.T) {
	srv := newFakeServer(t, reply{file: "text.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventTextDelta, Text: "Hello"},
		{Kind: llm.EventTextDelta, Text: ", world!"},
	}
	if !reflect.DeepEqual(rec.events, wantEvents) {
		t.Fatalf("events = %+v", rec.events)
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
	r := srv.requests()[0]
	if r.path != "/v1/messages" || r.header.Get("X-Api-Key") != "test-key" ||
		r.header.Get("Anthropic-Version") != "2023-06-01" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("request path %q headers %v", r.path, r.header)
	}
}

func TestThinkingAndToolUse(t *testing.T) {
	srv := newFakeServer(t, reply{file: "thinking_tool.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
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
	if !reflect.DeepEqual(rec.events, wantEvents) {
		t.Fatalf("events =\n%+v\nwant\n%+v", rec.events, wantEvents)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Text: "The user wants the weather. I should call get_weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
		&llm.TextBlock{Text: "Let me check."},
		&llm.ToolCallBlock{ID: "toolu_01A", Name: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius"}`)},
		&llm.ToolCallBlock{ID: "toolu_01B", Name: "get_time", Args: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse || resp.Usage != (llm.Usage{Input: 472, Output: 89}) {
		t.Fatalf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
}

func TestRedactedThinking(t *testing.T) {
	srv := newFakeServer(t, reply{file: "redacted.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "anthropic", Redacted: true, Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabvwVmy3wQ=="},
		&llm.TextBlock{Text: "Done."},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopLength {
		t.Fatalf("stop = %q, want length (max_tokens)", resp.Stop)
	}
	if rec.count(llm.EventThinkingDelta) != 0 || rec.count(llm.EventTextDelta) != 2 {
		t.Fatalf("events = %+v", rec.events)
	}
}

func TestOverloadedBeforeOutputIsRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "overloaded_early.sse"}, reply{file: "text.sse"})
	rec := &recorder{}
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != 2 || len(sl.got()) != 1 {
		t.Fatalf("requests = %d, sleeps = %v, want 2 and 1", len(srv.requests()), sl.got())
	}
	if rec.count(llm.EventStart) != 1 {
		t.Fatalf("EventStart reported %d times", rec.count(llm.EventStart))
	}
	if resp.Message.Text() != "Hello, world!" || resp.Usage.Output != 15 {
		t.Fatalf("response = %+v", resp)
	}
}

func TestOverloadedAfterOutputIsNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "overloaded_late.sse"}, reply{file: "text.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "overloaded_error" || le.Message != "Overloaded" || !le.Retryable || le.Status != 0 {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 1 {
		t.Fatalf("requests = %d, want 1", len(srv.requests()))
	}
	if resp.Stop != llm.StopError || resp.Message.Text() != "Partial answer" {
		t.Fatalf("partial response = %+v", resp)
	}
}

func TestOverloadedEveryTimeGivesUp(t *testing.T) {
	srv := newFakeServer(t, reply{file: "overloaded_early.sse"})
	sl := &sleeps{}
	p := New(Config{BaseURL: srv.URL, Options: transportOptions(sl, 3)})
	_, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	if !llm.IsRetryable(err) || len(srv.requests()) != 3 || len(sl.got()) != 2 {
		t.Fatalf("err = %v after %d requests, %d sleeps", err, len(srv.requests()), len(sl.got()))
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	srv := newFakeServer(t,
		reply{status: 429, header: map[string]string{"Retry-After": "2"}, file: "error_429.json"},
		reply{file: "text.sse"})
	rec := &recorder{}
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if d := sl.got(); len(d) != 1 || d[0] != 2*time.Second {
		t.Fatalf("sleeps = %v, want [2s]", d)
	}
	if resp.Message.Text() != "Hello, world!" || rec.count(llm.EventStart) != 1 {
		t.Fatalf("response %+v, events %+v", resp, rec.events)
	}
}

func TestUnauthorizedNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{status: 401, file: "error_401.json"}, reply{file: "text.sse"})
	rec := &recorder{}
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	want := llm.Error{Provider: "anthropic", Status: 401, Kind: "authentication_error", Message: "invalid x-api-key"}
	if *le != want {
		t.Fatalf("err = %#v, want %#v", *le, want)
	}
	if len(srv.requests()) != 1 || len(sl.got()) != 0 || len(rec.events) != 0 {
		t.Fatalf("requests %d sleeps %v events %v", len(srv.requests()), sl.got(), rec.events)
	}
	if resp == nil || resp.Stop != llm.StopError || resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("response = %+v", resp)
	}
}

func TestCutStream(t *testing.T) {
	srv := newFakeServer(t, reply{file: "cut.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "stream_cut" {
		t.Fatalf("err = %#v, want stream_cut", err)
	}
	if len(srv.requests()) != 1 {
		t.Fatalf("output was reported, yet the call was retried (%d requests)", len(srv.requests()))
	}
	// The unfinished tool call is left out; the text received is kept.
	if resp.Message.Text() != "Half a sent" || len(resp.Message.ToolCalls()) != 0 || resp.Stop != llm.StopError {
		t.Fatalf("partial response = %s stop %q", dump(resp.Message.Content), resp.Stop)
	}
}

func TestInvalidToolArgs(t *testing.T) {
	srv := newFakeServer(t, reply{file: "invalid_args.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || string(calls[0].Args) != "{}" || calls[0].ArgsError == "" {
		t.Fatalf("calls = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse {
		t.Fatalf("stop = %q", resp.Stop)
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"streaming\"}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(hangGuard(t))
	defer cancel()
	sink := func(ev llm.Event) {
		if ev.Kind == llm.EventTextDelta {
			cancel()
		}
	}
	done := make(chan struct{})
	var resp *llm.Response
	var err error
	go func() {
		defer close(done)
		resp, err = testProvider(srv, &sleeps{}).Stream(ctx, simpleRequest(), sink)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancellation")
	}
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if resp.Stop != llm.StopAborted || resp.Message.Text() != "streaming" {
		t.Fatalf("response = %+v", resp)
	}
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
	srv := newFakeServer(t, reply{file: "text.sse"})
	p := New(Config{BaseURL: srv.URL + "/v1/", Options: transportOptions(&sleeps{}, 0)})
	if _, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink); err != nil {
		t.Fatal(err)
	}
	if r := srv.requests()[0]; r.path != "/v1/messages" || r.header.Get("X-Api-Key") != "" {
		t.Fatalf("path %q, x-api-key %q", r.path, r.header.Get("X-Api-Key"))
	}
}

// dump renders blocks for failure messages.
func dump(blocks []llm.Block) string {
	b, _ := json.MarshalIndent(blocks, "", "  ")
	return string(b)
}
