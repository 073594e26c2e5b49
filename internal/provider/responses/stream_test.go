package responses

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
)

func TestTextOnly(t *testing.T) {
	run := providertest.TextOnly(t, dial, simpleRequest(), []string{"Hello", " there!"}, llm.Usage{Input: 176, Output: 7, CacheRead: 1024})
	r := run.Server.Requests()[0]
	if r.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer test-key" || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("path %q headers %v", r.Path, r.Header)
	}
	if run.Provider.Name() != "openai-responses" {
		t.Fatalf("name = %q", run.Provider.Name())
	}
}

func TestReasoningTextAndToolCalls(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "reasoning_tools.sse")
	run.WantEvents(t, []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventThinkingDelta, Text: "**Planning** Need the weather "},
		{Kind: llm.EventThinkingDelta, Text: "in two cities."},
		{Kind: llm.EventThinkingDelta, Text: "\n\n"},
		{Kind: llm.EventThinkingDelta, Text: "Call the tool twice."},
		{Kind: llm.EventTextDelta, Text: "Checking both."},
		{Kind: llm.EventToolStart, ToolID: "call_paris", ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_paris", Text: `{"city":`},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_paris", Text: `"Paris"}`},
		{Kind: llm.EventToolEnd, ToolID: "call_paris"},
		{Kind: llm.EventToolStart, ToolID: "call_rome", ToolName: "get_weather"},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_rome", Text: `{"city"`},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_rome", Text: `:"Rome"}`},
		{Kind: llm.EventToolEnd, ToolID: "call_rome"},
	})
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "openai-responses", Text: "**Planning** Need the weather in two cities.\n\nCall the tool twice.", ID: "rs_01", Data: "gAAAAABenc-1"},
		&llm.TextBlock{Text: "Checking both."},
		&llm.ToolCallBlock{ID: "call_paris", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
		&llm.ToolCallBlock{ID: "call_rome", Name: "get_weather", Args: json.RawMessage(`{"city":"Rome"}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 44, Output: 60, CacheRead: 256})
}

// TestItemsWithoutDeltas covers servers that send each item whole in
// response.output_item.done: what no delta carried is reported then.
func TestItemsWithoutDeltas(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "done_only.sse")
	run.WantEvents(t, []llm.Event{
		{Kind: llm.EventStart},
		{Kind: llm.EventThinkingDelta, Text: "First."},
		{Kind: llm.EventThinkingDelta, Text: "\n\n"},
		{Kind: llm.EventThinkingDelta, Text: "Second."},
		{Kind: llm.EventTextDelta, Text: "Listing."},
		{Kind: llm.EventToolStart, ToolID: "call_ls", ToolName: "ls"},
		{Kind: llm.EventToolArgsDelta, ToolID: "call_ls", Text: `{"path":"."}`},
		{Kind: llm.EventToolEnd, ToolID: "call_ls"},
	})
	run.WantContent(t, []llm.Block{
		&llm.ThinkingBlock{Provider: "openai-responses", Text: "First.\n\nSecond.", ID: "rs_03", Data: "gAAAAABenc-3"},
		&llm.TextBlock{Text: "Listing."},
		&llm.ToolCallBlock{ID: "call_ls", Name: "ls", Args: json.RawMessage(`{"path":"."}`)},
	})
	run.WantEnd(t, llm.StopToolUse, llm.Usage{Input: 50, Output: 20})
}

// TestRawReasoning covers servers that stream the model's own reasoning
// (reasoning_text) instead of a summary: it is shown as thinking and kept
// marked raw, whether it came as deltas or whole in output_item.done.
func TestRawReasoning(t *testing.T) {
	for _, tc := range []struct {
		file   string
		deltas []string
		block  *llm.ThinkingBlock
	}{
		{"reasoning_raw.sse", []string{"The user wants the files. ", "Use ls."},
			&llm.ThinkingBlock{Provider: "openai-responses", Text: "The user wants the files. Use ls.", Raw: true, ID: "rs_07", Data: "gAAAAABenc-7"}},
		{"reasoning_raw_done_only.sse", []string{"Think.", "\n\n", "Then answer."},
			&llm.ThinkingBlock{Provider: "openai-responses", Text: "Think.\n\nThen answer.", Raw: true, ID: "rs_08"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			run := providertest.Replay(t, dial, simpleRequest(), tc.file)
			var thinking []string
			for _, e := range run.Recorder.Events {
				if e.Kind == llm.EventThinkingDelta {
					thinking = append(thinking, e.Text)
				}
			}
			if !reflect.DeepEqual(thinking, tc.deltas) {
				t.Errorf("thinking deltas %q, want %q", thinking, tc.deltas)
			}
			if !reflect.DeepEqual(run.Resp.Message.Content[0], tc.block) {
				t.Errorf("content = %s", providertest.Dump(run.Resp.Message.Content))
			}
		})
	}
}

func TestIncompleteAtMaxOutputTokens(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "incomplete.sse")
	// The call whose arguments were cut off is kept as cut, so the model
	// learns why it did not run.
	if calls := run.Resp.Message.ToolCalls(); len(calls) != 1 || !calls[0].Cut || run.Resp.Message.Text() != "A long answer that" {
		t.Fatalf("content = %s", providertest.Dump(run.Resp.Message.Content))
	}
	run.WantEnd(t, llm.StopLength, llm.Usage{Input: 10, Output: 16})
	if run.Recorder.Count(llm.EventToolStart) != 1 || run.Recorder.Count(llm.EventToolEnd) != 0 {
		t.Fatalf("events = %+v", run.Recorder.Events)
	}
}

func TestInvalidToolArgs(t *testing.T) {
	run := providertest.InvalidToolArgs(t, dial, simpleRequest())
	if run.Resp.Message.ToolCalls()[0].ID != "call_bad" || run.Recorder.Count(llm.EventToolArgsDelta) != 2 {
		t.Fatalf("content %s events %+v", providertest.Dump(run.Resp.Message.Content), run.Recorder.Events)
	}
}

func TestHandleRejectsBadEvents(t *testing.T) {
	tests := []struct{ name, data string }{
		{"not json", `{"type":`},
		{"delta before item", `{"type":"response.output_text.delta","output_index":0,"item_id":"msg_x","delta":"x"}`},
		{"item added without item", `{"type":"response.output_item.added","output_index":0}`},
		{"index out of range", `{"type":"response.output_item.added","output_index":100000,"item":{"type":"message"}}`},
	}
	for _, tt := range tests {
		a := newAssembler("openai-responses", func(llm.Event) {})
		err := a.handle(httpcall.Event{Name: "message", Data: []byte(tt.data)})
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != "invalid_event" || le.Retryable {
			t.Errorf("%s: err = %#v", tt.name, err)
		}
	}
}

func TestItemFoundByIDWithoutIndex(t *testing.T) {
	rec := &providertest.Recorder{}
	a := newAssembler("openai-responses", rec.Sink)
	for _, data := range []string{
		`{"type":"response.output_item.added","item":{"id":"msg_1","type":"message"}}`,
		`{"type":"response.output_text.delta","item_id":"msg_1","delta":"hi"}`,
		`{"type":"response.completed","response":{"status":"completed"}}`,
	} {
		if err := a.handle(httpcall.Event{Name: "message", Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	if resp := a.Response(); resp.Message.Text() != "hi" || !a.done {
		t.Fatalf("response = %s", providertest.Dump(resp.Message.Content))
	}
}

// TestRawReasoningAndSummary covers an item with both raw reasoning and a
// summary: the thinking shown keeps them apart with a blank line, and the
// block keeps the summary, which is what goes back as summary_text.
func TestRawReasoningAndSummary(t *testing.T) {
	rec := &providertest.Recorder{}
	a := newAssembler("openai-responses", rec.Sink)
	for _, data := range []string{
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning"}}`,
		`{"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":"raw"}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"sum"}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"more"}`,
		`{"type":"response.completed","response":{"status":"completed"}}`,
	} {
		if err := a.handle(httpcall.Event{Name: "message", Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	var shown strings.Builder
	for _, e := range rec.Events {
		if e.Kind == llm.EventThinkingDelta {
			shown.WriteString(e.Text)
		}
	}
	if shown.String() != "raw\n\nsum\n\nmore" {
		t.Errorf("thinking shown %q", shown.String())
	}
	want := &llm.ThinkingBlock{Provider: "openai-responses", Text: "sum\n\nmore", ID: "rs_1"}
	if got := a.Response().Message.Content; len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("content = %s", providertest.Dump(got))
	}
}

func TestStopReasons(t *testing.T) {
	providertest.StopReasons(t, stopReason, map[string]llm.StopReason{
		"max_output_tokens": llm.StopLength,
		"content_filter":    llm.StopRefusal,
		"incomplete":        llm.StopEndTurn,
	})
}

func TestDecodeError(t *testing.T) {
	tests := []struct{ body, kind, msg string }{
		{`{"error":{"message":"m","type":"tokens","code":"rate_limit_exceeded"}}`, "rate_limit_exceeded", "m"},
		{`{"error":{"message":"m","type":"server_error","code":null}}`, "server_error", "m"},
		{`{"error":{"message":"m","code":429}}`, "", "m"},
		{`{"error":"plain"}`, "", "plain"},
		{`{"error":null}`, "", ""},
		{`not json`, "", ""},
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
		"":                                   "https://api.openai.com/v1/responses",
		"https://api.openai.com/v1":          "https://api.openai.com/v1/responses",
		"https://api.openai.com/v1/":         "https://api.openai.com/v1/responses",
		" https://proxy.local/openai/v1 ":    "https://proxy.local/openai/v1/responses",
		"http://localhost:8080/v1/responses": "http://localhost:8080/v1/responses",
	}
	for in, want := range tests {
		if got := endpoint(in); got != want {
			t.Errorf("endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigNameHeadersAndNoKey(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{File: "reasoning_tools.sse"})
	p := New(Config{BaseURL: srv.URL + "/api/v1/", Name: "router", Headers: map[string]string{"X-Title": "zot", "Content-Type": "application/json; charset=utf-8"}})
	resp, err := p.Stream(providertest.HangGuard(t), simpleRequest(), (&providertest.Recorder{}).Sink)
	if err != nil {
		t.Fatal(err)
	}
	if th, ok := resp.Message.Content[0].(*llm.ThinkingBlock); !ok || th.Provider != "router" || p.Name() != "router" {
		t.Fatalf("name %q content %s", p.Name(), providertest.Dump(resp.Message.Content))
	}
	r := srv.Requests()[0]
	if r.Path != "/api/v1/responses" || r.Header.Get("Authorization") != "" || r.Header.Get("X-Title") != "zot" ||
		r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("path %q headers %v", r.Path, r.Header)
	}
}

// The fixtures below follow the Responses stream of the openai npm package
// 7.57.0 (src/resources/responses/responses.ts): ResponseOutputMessage
// .phase ('commentary' | 'final_answer', "preserve and resend phase on all
// assistant messages"), ResponseOutputRefusal {type:"refusal", refusal}
// with response.refusal.delta, incomplete_details.reason
// 'max_output_tokens' | 'content_filter', and
// ResponseUsage.input_tokens_details.cache_write_tokens.

func TestPhaseKeptAndCacheWrites(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "phase.sse")
	run.WantContent(t, []llm.Block{
		&llm.TextBlock{Text: "Let me look.", Phase: "commentary"},
		&llm.TextBlock{Text: "Three files.", Phase: "final_answer"},
	})
	run.WantEnd(t, llm.StopEndTurn, llm.Usage{Input: 500, Output: 9, CacheRead: 1000, CacheWrite: 2500})
	// Sent back as EasyInputMessage items, one per phase, phase kept.
	req := simpleRequest()
	req.Messages = append(req.Messages, run.Resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "thanks"}}})
	body, err := buildRequest(req, "openai-responses")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"message","role":"assistant","content":"Let me look.","phase":"commentary"}`,
		`{"type":"message","role":"assistant","content":"Three files.","phase":"final_answer"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("request lacks %s:\n%s", want, body)
		}
	}
}

func TestRefusal(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "refusal.sse")
	if run.Resp.Stop != llm.StopRefusal || run.Resp.Reason != "I can't help with that." || run.Recorder.Count(llm.EventTextDelta) != 1 {
		t.Fatalf("stop %q reason %q events %+v", run.Resp.Stop, run.Resp.Reason, run.Recorder.Events)
	}
}

func TestContentFilterIsARefusal(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "content_filter.sse")
	if run.Resp.Stop != llm.StopRefusal || run.Resp.Reason != "content_filter" || run.Resp.Message.Text() != "Step one is" {
		t.Fatalf("stop %q reason %q", run.Resp.Stop, run.Resp.Reason)
	}
}

func TestToolCallCutByMaxOutputTokens(t *testing.T) {
	run := providertest.Replay(t, dial, simpleRequest(), "length_tool.sse")
	calls := run.Resp.Message.ToolCalls()
	if run.Resp.Stop != llm.StopLength || len(calls) != 1 || !calls[0].Cut || calls[0].ID != "call_big" ||
		!strings.Contains(calls[0].ArgsError, "max_output_tokens") {
		t.Fatalf("stop %q content %s", run.Resp.Stop, providertest.Dump(run.Resp.Message.Content))
	}
}
