package gemini

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestTextOnly(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "text.sse"})
	rec := &providertest.Recorder{}
	p := testProvider(srv.Server, &providertest.Sleeps{})
	resp, err := p.Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventTextDelta, Text: "Hello"},
		{Kind: llm.EventTextDelta, Text: " there!"},
	}
	if !reflect.DeepEqual(rec.Events, wantEvents) {
		t.Fatalf("events = %+v", rec.Events)
	}
	if !reflect.DeepEqual(resp.Message.Content, []llm.Block{&llm.TextBlock{Text: "Hello there!"}}) || resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("message = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopEndTurn {
		t.Fatalf("stop = %q", resp.Stop)
	}
	if want := (llm.Usage{Input: 176, Output: 7, CacheRead: 1024}); resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1beta/models/gemini-test:streamGenerateContent" || r.Query != "alt=sse" ||
		r.Header.Get("X-Goog-Api-Key") != "test-key" || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Authorization") != "" {
		t.Fatalf("path %q query %q headers %v", r.Path, r.Query, r.Header)
	}
	if p.Name() != "gemini" {
		t.Fatalf("name = %q", p.Name())
	}
}

func TestThinkingAndParallelCalls(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "thinking_tools.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	// The calls come without ids; each gets one of its own.
	paris, rome := "gemini-call-r-tools-0", "gemini-call-r-tools-1"
	wantEvents := []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventThinkingDelta, Text: "**Planning** Need the weather "},
		{Kind: llm.EventThinkingDelta, Text: "in two cities."},
		{Kind: llm.EventTextDelta, Text: "Checking both."},
		{Kind: llm.EventToolStart, ToolID: paris, ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: paris, Text: `{"city":"Paris"}`},
		{Kind: llm.EventToolEnd, ToolID: paris},
		{Kind: llm.EventToolStart, ToolID: rome, ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: rome, Text: `{"city":"Rome"}`},
		{Kind: llm.EventToolEnd, ToolID: rome},
	}
	if !reflect.DeepEqual(rec.Events, wantEvents) {
		t.Fatalf("events =\n%+v\nwant\n%+v", rec.Events, wantEvents)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "gemini", Text: "**Planning** Need the weather in two cities."},
		&llm.TextBlock{Text: "Checking both."},
		&llm.ToolCallBlock{ID: paris, Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`), Signature: "c2lnLXBhcmlz"},
		&llm.ToolCallBlock{ID: rome, Name: "get_weather", Args: json.RawMessage(`{"city":"Rome"}`)},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse || resp.Usage != (llm.Usage{Input: 44, Output: 60, CacheRead: 256}) {
		t.Fatalf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
}

func TestCallIDsAndThoughtSignatures(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "gemini3_tools.sse"})
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "gemini", Text: "Thinking about files.", Signature: "dGhvdWdodC1zaWc="},
		&llm.ToolCallBlock{ID: "fc-1", Name: "ls", Args: json.RawMessage(`{"path":"."}`), Signature: "Y2FsbC1zaWc="},
		&llm.ToolCallBlock{ID: "fc-2", Name: "now", Args: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", providertest.Dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse || resp.Usage != (llm.Usage{Input: 50, Output: 12}) {
		t.Fatalf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
}

func TestTextSignatureKept(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "text_signature.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []llm.Block{
		&llm.TextBlock{Text: "The answer is 42."},
		&llm.ThinkingBlock{Provider: "gemini", Signature: "dGV4dC1zaWc="},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", providertest.Dump(resp.Message.Content))
	}
	if rec.Count(llm.EventThinkingDelta) != 0 || rec.Count(llm.EventTextDelta) != 2 || resp.Stop != llm.StopEndTurn {
		t.Fatalf("events %+v stop %q", rec.Events, resp.Stop)
	}
}

func TestMaxTokens(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "max_tokens.sse"})
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "A long answer that stops" || resp.Stop != llm.StopLength || resp.Usage != (llm.Usage{Input: 10, Output: 16}) {
		t.Fatalf("response %s stop %q usage %+v", providertest.Dump(resp.Message.Content), resp.Stop, resp.Usage)
	}
}

func TestInvalidToolArgs(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "invalid_args.sse"})
	rec := &providertest.Recorder{}
	resp, err := testProvider(srv.Server, &providertest.Sleeps{}).Stream(providertest.HangGuard(t), simpleRequest(), rec.Sink)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "edit" || string(calls[0].Args) != "{}" || calls[0].ArgsError == "" || resp.Stop != llm.StopToolUse {
		t.Fatalf("calls = %s stop %q", providertest.Dump(resp.Message.Content), resp.Stop)
	}
	if rec.Count(llm.EventToolStart) != 1 || rec.Count(llm.EventToolArgsDelta) != 1 || rec.Count(llm.EventToolEnd) != 1 {
		t.Fatalf("events = %+v", rec.Events)
	}
}

func TestPromptBlocked(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "blocked.sse"}, providertest.Reply{File: "text.sse"})
	sl := &providertest.Sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "prompt_blocked" || le.Message != "prompt blocked: PROHIBITED_CONTENT" || le.Retryable {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.Requests()) != 1 || len(sl.Got()) != 0 || resp.Stop != llm.StopError {
		t.Fatalf("requests %d sleeps %v stop %q", len(srv.Requests()), sl.Got(), resp.Stop)
	}
}

func TestHandleRejectsBadChunk(t *testing.T) {
	a := newAssembler(func(llm.Event) {})
	err := a.handle([]byte(`{"candidates":[`))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "invalid_event" || le.Retryable {
		t.Fatalf("err = %#v", err)
	}
}

func TestOtherCandidatesIgnored(t *testing.T) {
	a := newAssembler(func(llm.Event) {})
	err := a.handle([]byte(`{"candidates":[{"index":1,"content":{"parts":[{"text":"other"}]},"finishReason":"STOP"},{"index":0,"content":{"parts":[{"text":"mine"}]},"finishReason":"STOP"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp := a.response(); resp.Message.Text() != "mine" || a.finish != "STOP" {
		t.Fatalf("response %s finish %q", providertest.Dump(resp.Message.Content), a.finish)
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		in    string
		tools bool
		want  llm.StopReason
	}{
		{"STOP", false, llm.StopEndTurn},
		{"MAX_TOKENS", false, llm.StopLength},
		{"SAFETY", false, llm.StopEndTurn},
		{"RECITATION", false, llm.StopEndTurn},
		{"OTHER", false, llm.StopEndTurn},
		{"STOP", true, llm.StopToolUse},
		{"MAX_TOKENS", true, llm.StopToolUse},
	}
	for _, tt := range tests {
		if got := stopReason(tt.in, tt.tools); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", tt.in, tt.tools, got, tt.want)
		}
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		body, status, msg string
		retryable         bool
	}{
		{`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`, "UNAVAILABLE", "overloaded", true},
		{`[{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}]`, "RESOURCE_EXHAUSTED", "quota", true},
		{`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`, "INVALID_ARGUMENT", "bad", false},
		{`{"error":{"code":502,"message":"bad gateway"}}`, "", "bad gateway", true},
	}
	for _, tt := range tests {
		e, ok := parseError([]byte(tt.body))
		if !ok || e.Status != tt.status || e.Message != tt.msg || e.retryable() != tt.retryable {
			t.Errorf("parseError(%s) = %+v, %v", tt.body, e, ok)
		}
	}
	for _, body := range []string{`not json`, `{"detail":"x"}`, `[]`} {
		if _, ok := parseError([]byte(body)); ok {
			t.Errorf("parseError(%s) found an error", body)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ base, model, want string }{
		{"", "gemini-test", "https://generativelanguage.googleapis.com/v1beta/models/gemini-test:streamGenerateContent?alt=sse"},
		{"https://generativelanguage.googleapis.com/v1beta/", "models/gemini-test", "https://generativelanguage.googleapis.com/v1beta/models/gemini-test:streamGenerateContent?alt=sse"},
		{"http://proxy.local/google/v1alpha", "gemini-3.8-flash", "http://proxy.local/google/v1alpha/models/gemini-3.8-flash:streamGenerateContent?alt=sse"},
		{"http://proxy.local/v1beta", "a b", "http://proxy.local/v1beta/models/a%20b:streamGenerateContent?alt=sse"},
	}
	for _, tt := range tests {
		if got := New(Config{BaseURL: tt.base}).endpoint(tt.model); got != tt.want {
			t.Errorf("endpoint(%q, %q) = %q, want %q", tt.base, tt.model, got, tt.want)
		}
	}
}

func TestToolArgs(t *testing.T) {
	tests := []struct {
		raw, want string
		bad       bool
	}{
		{``, `{}`, false},
		{`{"a":1}`, `{"a":1}`, false},
		{`{"a":`, `{}`, true},
		{`[1,2]`, `{}`, true},
		{`"text"`, `{}`, true},
	}
	for _, tt := range tests {
		args, argsErr := llm.ParseToolArgs([]byte(tt.raw))
		if string(args) != tt.want || (argsErr != "") != tt.bad {
			t.Errorf("llm.ParseToolArgs(%q) = %s, %q", tt.raw, args, argsErr)
		}
	}
}

func TestNoKeySendsNoKeyHeader(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "text.sse"})
	req := simpleRequest()
	req.Model = "models/gemini-3.8-flash"
	if _, err := New(Config{BaseURL: srv.URL + "/v1alpha/"}).Stream(providertest.HangGuard(t), req, nil); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if _, ok := r.Header["X-Goog-Api-Key"]; ok || r.Path != "/v1alpha/models/gemini-3.8-flash:streamGenerateContent" {
		t.Fatalf("path %q headers %v", r.Path, r.Header)
	}
}
