package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestTextOnly(t *testing.T) {
	run := providertest.TextOnly(t, dial, simpleRequest(), []string{"Hello", " there!"}, llm.Usage{Input: 176, Output: 7, CacheRead: 1024})
	r := run.Server.Requests()[0]
	if r.Path != "/v1beta/models/gemini-test:streamGenerateContent" || r.Query != "alt=sse" ||
		r.Header.Get("X-Goog-Api-Key") != "test-key" || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Authorization") != "" {
		t.Fatalf("path %q query %q headers %v", r.Path, r.Query, r.Header)
	}
	if run.Provider.Name() != "gemini" {
		t.Fatalf("name = %q", run.Provider.Name())
	}
}

func TestThinkingAndParallelCalls(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "thinking_tools.sse")
	// The calls come without ids; each gets one of its own.
	paris, rome := "gemini-call-r-tools-0", "gemini-call-r-tools-1"
	run.WantEvents(t, []llm.Event{
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
	})
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "gemini", Text: "**Planning** Need the weather in two cities."},
		&llm.TextBlock{Text: "Checking both."},
		&llm.ToolCallBlock{ID: paris, Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`), Signature: "c2lnLXBhcmlz"},
		&llm.ToolCallBlock{ID: rome, Name: "get_weather", Args: json.RawMessage(`{"city":"Rome"}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 44, Output: 60, CacheRead: 256})
}

func TestCallIDsAndThoughtSignatures(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "gemini3_tools.sse")
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "gemini", Text: "Thinking about files.", Signature: "dGhvdWdodC1zaWc="},
		&llm.ToolCallBlock{ID: "fc-1", Name: "ls", Args: json.RawMessage(`{"path":"."}`), Signature: "Y2FsbC1zaWc="},
		&llm.ToolCallBlock{ID: "fc-2", Name: "now", Args: json.RawMessage(`{}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 50, Output: 12})
}

func TestTextSignatureKept(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "text_signature.sse")
	run.WantContent(t, []llm.Block{
		&llm.TextBlock{Text: "The answer is 42."},
		&llm.ThinkingBlock{Provider: "gemini", Signature: "dGV4dC1zaWc="},
	})
	if run.Recorder.Count(llm.EventThinkingDelta) != 0 || run.Recorder.Count(llm.EventTextDelta) != 2 || run.Resp.Stop != llm.StopEndTurn {
		t.Fatalf("events %+v stop %q", run.Recorder.Events, run.Resp.Stop)
	}
}

func TestMaxTokens(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "max_tokens.sse")
	if run.Resp.Message.Text() != "A long answer that stops" || run.Resp.Stop != llm.StopLength || run.Resp.Usage != (llm.Usage{Input: 10, Output: 16}) {
		t.Fatalf("response %s stop %q usage %+v", providertest.Dump(run.Resp.Message.Content), run.Resp.Stop, run.Resp.Usage)
	}
}

func TestInvalidToolArgs(t *testing.T) {
	run := providertest.InvalidToolArgs(t, dial, simpleRequest())
	// Gemini sends a call's arguments whole, in one delta.
	if run.Resp.Message.ToolCalls()[0].Name != "edit" || run.Recorder.Count(llm.EventToolArgsDelta) != 1 {
		t.Fatalf("content %s events %+v", providertest.Dump(run.Resp.Message.Content), run.Recorder.Events)
	}
}

// TestPromptBlocked: a prompt the safety system blocked
// (promptFeedback.blockReason PROHIBITED_CONTENT, BlockedReason of
// @google/genai 3.1.0) is a refusal with that reason; one blocked for
// OTHER stays a failure.
func TestPromptBlocked(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "blocked.sse")
	if run.Resp.Stop != llm.StopRefusal || run.Resp.Reason != "prompt blocked: PROHIBITED_CONTENT" || len(run.Resp.Message.Content) != 0 {
		t.Fatalf("stop %q reason %q content %s", run.Resp.Stop, run.Resp.Reason, providertest.Dump(run.Resp.Message.Content))
	}
	a := newAssembler(func(llm.Event) {})
	err := a.handle([]byte(`{"promptFeedback":{"blockReason":"OTHER","blockReasonMessage":"no"}}`))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "prompt_blocked" || le.Message != "prompt blocked: OTHER: no" {
		t.Fatalf("err = %#v", err)
	}
}

// TestFinishReasons maps every FinishReason of @google/genai 3.3.0
// (dist/genai.d.ts) as zot decides: the safety and policy stops
// (ESCALATION, PUP_LIMITED_DISABLED and MODEL_ARMOR among them) are
// refusals with the reason, MALFORMED_FUNCTION_CALL, TOO_MANY_TOOL_CALLS,
// OTHER, MISSING_THOUGHT_SIGNATURE and the rest are failures that carry
// the vendor's reason (provider_error), and only STOP ends the turn
// plainly. A reason outside the enum ends it like STOP after an answer
// (aimock sends FUNCTION_CALL with function calls), and fails without one:
// never a silent empty success.
func TestFinishReasons(t *testing.T) {
	refusals := []string{"SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "ESCALATION", "PUP_LIMITED_DISABLED", "MODEL_ARMOR"}
	failures := []string{"MALFORMED_FUNCTION_CALL", "TOO_MANY_TOOL_CALLS", "OTHER", "UNEXPECTED_TOOL_CALL",
		"FINISH_REASON_UNSPECIFIED", "NO_IMAGE", "IMAGE_OTHER", "CONTINUATION", "MALFORMED_RESPONSE", "MISSING_THOUGHT_SIGNATURE"}
	chunk := func(reason, msg string) []byte {
		return []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Par"}]},"finishReason":"` + reason + `","finishMessage":"` + msg + `","index":0}]}`)
	}
	for _, f := range refusals {
		a := newAssembler(func(llm.Event) {})
		if err := a.handle(chunk(f, "")); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if resp := a.Response(); resp.Stop != llm.StopRefusal || resp.Reason != f {
			t.Errorf("%s: stop %q reason %q", f, resp.Stop, resp.Reason)
		}
	}
	a := newAssembler(func(llm.Event) {})
	a.handle(chunk("SAFETY", "Harassment"))
	if resp := a.Response(); resp.Reason != "SAFETY: Harassment" {
		t.Errorf("reason with message: %q", resp.Reason)
	}
	for _, f := range failures {
		a := newAssembler(func(llm.Event) {})
		err := a.handle(chunk(f, "why"))
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != f || le.Message != "why" || le.Error() != "gemini: "+f+": why" {
			t.Errorf("%s: err = %#v", f, err)
		}
		if wantRetry := f == "MALFORMED_FUNCTION_CALL" || f == "UNEXPECTED_TOOL_CALL"; le != nil && le.Retryable != wantRetry {
			t.Errorf("%s: retryable %v", f, le.Retryable)
		}
	}
	a = newAssembler(func(llm.Event) {})
	if err := a.handle(chunk("OTHER", "")); err == nil || !strings.Contains(err.Error(), "finish reason OTHER") {
		t.Errorf("OTHER without a message: %v", err)
	}
	a = newAssembler(func(llm.Event) {})
	if err := a.handle(chunk("A_REASON_NOT_YET_INVENTED", "")); err != nil {
		t.Fatal(err)
	}
	if resp := a.Response(); resp.Stop != llm.StopEndTurn || resp.Message.Text() != "Par" {
		t.Errorf("unknown reason: stop %q", resp.Stop)
	}
	a = newAssembler(func(llm.Event) {})
	err := a.handle([]byte(`{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"A_REASON_NOT_YET_INVENTED","index":0}]}`))
	if err == nil || !strings.Contains(err.Error(), "gemini: A_REASON_NOT_YET_INVENTED: the model ended without an answer") {
		t.Errorf("unknown reason without an answer: %v", err)
	}
	a = newAssembler(func(llm.Event) {})
	err = a.handle([]byte(`{"candidates":[{"finishReason":"MISSING_THOUGHT_SIGNATURE","index":0}]}`))
	if err == nil || !strings.Contains(err.Error(), "gemini: MISSING_THOUGHT_SIGNATURE: ") || !strings.Contains(err.Error(), "zot error") {
		t.Errorf("missing thought signature: %v", err)
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
	if resp := a.Response(); resp.Message.Text() != "mine" || a.finish != "STOP" {
		t.Fatalf("response %s finish %q", providertest.Dump(resp.Message.Content), a.finish)
	}
}

func TestStopReasons(t *testing.T) {
	providertest.StopReasons(t, stopReason, map[string]llm.StopReason{
		"STOP":       llm.StopEndTurn,
		"MAX_TOKENS": llm.StopLength,
		"SAFETY":     llm.StopRefusal,
		"RECITATION": llm.StopRefusal,
	})
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
