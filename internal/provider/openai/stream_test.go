package openai

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
		{Kind: llm.EventTextDelta, Text: " there!"},
	}
	if !reflect.DeepEqual(rec.events, wantEvents) {
		t.Fatalf("events = %+v", rec.events)
	}
	if !reflect.DeepEqual(resp.Message.Content, []llm.Block{&llm.TextBlock{Text: "Hello there!"}}) || resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("message = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopEndTurn {
		t.Fatalf("stop = %q", resp.Stop)
	}
	if want := (llm.Usage{Input: 176, Output: 7, CacheRead: 1024}); resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
	r := srv.requests()[0]
	if r.path != "/v1/chat/completions" || r.header.Get("Authorization") != "Bearer test-key" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("path %q headers %v", r.path, r.header)
	}
}

func TestReasoningAndParallelToolCalls(t *testing.T) {
	srv := newFakeServer(t, reply{file: "reasoning_tools.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []llm.Event{
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
	}
	if !reflect.DeepEqual(rec.events, wantEvents) {
		t.Fatalf("events =\n%+v\nwant\n%+v", rec.events, wantEvents)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "openai", Text: "Need the weather in two cities."},
		&llm.TextBlock{Text: "Checking both."},
		&llm.ToolCallBlock{ID: "call_paris", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
		&llm.ToolCallBlock{ID: "call_rome", Name: "get_weather", Args: json.RawMessage(`{"city":"Rome"}`)},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse || resp.Usage != (llm.Usage{Input: 44, Output: 60, CacheRead: 256}) {
		t.Fatalf("stop %q usage %+v", resp.Stop, resp.Usage)
	}
}

func TestOpenRouterReasoningField(t *testing.T) {
	srv := newFakeServer(t, reply{file: "openrouter_reasoning.sse"})
	p := New(Config{BaseURL: srv.URL + "/api/v1/", Name: "openrouter", Headers: map[string]string{"HTTP-Referer": "https://zot.dev", "X-Title": "zot"}})
	resp, err := p.Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	if err != nil {
		t.Fatal(err)
	}
	wantContent := []llm.Block{
		&llm.ThinkingBlock{Provider: "openrouter", Text: "Short thought."},
		&llm.TextBlock{Text: "Answer."},
	}
	if !reflect.DeepEqual(resp.Message.Content, wantContent) {
		t.Fatalf("content = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopLength || resp.Usage != (llm.Usage{Input: 10, Output: 20}) || p.Name() != "openrouter" {
		t.Fatalf("stop %q usage %+v name %q", resp.Stop, resp.Usage, p.Name())
	}
	r := srv.requests()[0]
	if r.path != "/api/v1/chat/completions" || r.header.Get("Authorization") != "" ||
		r.header.Get("HTTP-Referer") != "https://zot.dev" || r.header.Get("X-Title") != "zot" {
		t.Fatalf("path %q headers %v", r.path, r.header)
	}
}

func TestToolCallsWithFinishStop(t *testing.T) {
	srv := newFakeServer(t, reply{file: "tools_finish_stop.sse"})
	rec := &recorder{}
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "call_ls" || calls[0].Name != "bash" || string(calls[0].Args) != `{"command": "ls"}` {
		t.Fatalf("calls = %s", dump(resp.Message.Content))
	}
	if resp.Stop != llm.StopToolUse {
		t.Fatalf("stop = %q, want tool_use", resp.Stop)
	}
	if rec.count(llm.EventToolStart) != 1 || rec.count(llm.EventToolEnd) != 1 {
		t.Fatalf("events = %+v", rec.events)
	}
}

func TestErrorChunkBeforeOutputIsRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "error_early.sse"}, reply{file: "text.sse"})
	rec := &recorder{}
	sl := &sleeps{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != 2 || len(sl.got()) != 1 || rec.count(llm.EventStart) != 1 {
		t.Fatalf("requests %d sleeps %v events %+v", len(srv.requests()), sl.got(), rec.events)
	}
	if resp.Message.Text() != "Hello there!" {
		t.Fatalf("response = %+v", resp)
	}
}

func TestErrorChunkAfterOutputIsNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{file: "error_late.sse"}, reply{file: "text.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Message != "Provider returned error" || !le.Retryable || le.Status != 0 {
		t.Fatalf("err = %#v", err)
	}
	if len(srv.requests()) != 1 || resp.Stop != llm.StopError || resp.Message.Text() != "Partial" {
		t.Fatalf("requests %d response %+v", len(srv.requests()), resp)
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	srv := newFakeServer(t,
		reply{status: 429, header: map[string]string{"Retry-After-Ms": "1500"}, file: "error_429.json"},
		reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	if d := sl.got(); len(d) != 1 || d[0] != 1500*time.Millisecond {
		t.Fatalf("sleeps = %v, want [1.5s]", d)
	}
	if resp.Message.Text() != "Hello there!" || rec.count(llm.EventStart) != 1 {
		t.Fatalf("response %+v", resp)
	}
}

func TestUnauthorizedNotRetried(t *testing.T) {
	srv := newFakeServer(t, reply{status: 401, file: "error_401.json"}, reply{file: "text.sse"})
	sl := &sleeps{}
	rec := &recorder{}
	resp, err := testProvider(srv.Server, sl).Stream(hangGuard(t), simpleRequest(), rec.sink)
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	want := llm.Error{Provider: "openai", Status: 401, Kind: "invalid_request_error",
		Message: "Incorrect API key provided: test-key. You can find your API key at https://platform.openai.com/account/api-keys."}
	if *le != want {
		t.Fatalf("err = %#v", *le)
	}
	if len(srv.requests()) != 1 || len(sl.got()) != 0 || len(rec.events) != 0 || resp.Stop != llm.StopError {
		t.Fatalf("requests %d sleeps %v events %v resp %+v", len(srv.requests()), sl.got(), rec.events, resp)
	}
}

func TestCutStream(t *testing.T) {
	srv := newFakeServer(t, reply{file: "cut.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "stream_cut" {
		t.Fatalf("err = %#v, want stream_cut", err)
	}
	if len(srv.requests()) != 1 || resp.Message.Text() != "Half a sent" || len(resp.Message.ToolCalls()) != 0 || resp.Stop != llm.StopError {
		t.Fatalf("requests %d partial %s stop %q", len(srv.requests()), dump(resp.Message.Content), resp.Stop)
	}
}

func TestInvalidToolArgs(t *testing.T) {
	srv := newFakeServer(t, reply{file: "invalid_args.sse"})
	resp, err := testProvider(srv.Server, &sleeps{}).Stream(hangGuard(t), simpleRequest(), (&recorder{}).sink)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || string(calls[0].Args) != "{}" || calls[0].ArgsError == "" || resp.Stop != llm.StopToolUse {
		t.Fatalf("calls = %s stop %q", dump(resp.Message.Content), resp.Stop)
	}
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
	calls := a.response().Message.ToolCalls()
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"streaming"}}]}`+"\n\n")
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
	if err != context.Canceled || resp.Stop != llm.StopAborted || resp.Message.Text() != "streaming" {
		t.Fatalf("err %v response %+v", err, resp)
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		in    string
		tools bool
		want  llm.StopReason
	}{
		{"stop", false, llm.StopEndTurn},
		{"tool_calls", false, llm.StopToolUse},
		{"function_call", false, llm.StopToolUse},
		{"length", false, llm.StopLength},
		{"content_filter", false, llm.StopEndTurn},
		{"stop", true, llm.StopToolUse},
		{"", false, llm.StopEndTurn},
	}
	for _, tt := range tests {
		if got := stopReason(tt.in, tt.tools); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", tt.in, tt.tools, got, tt.want)
		}
	}
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

func TestToolArgs(t *testing.T) {
	for raw, bad := range map[string]bool{``: false, `{"a":1}`: false, `{"a":`: true, `[]`: true, `7`: true} {
		args, argsErr := llm.ParseToolArgs([]byte(raw))
		if (argsErr != "") != bad || (bad && string(args) != "{}") || !json.Valid(args) {
			t.Errorf("llm.ParseToolArgs(%q) = %s, %q", raw, args, argsErr)
		}
	}
}

// dump renders blocks for failure messages.
func dump(blocks []llm.Block) string {
	b, _ := json.MarshalIndent(blocks, "", "  ")
	return string(b)
}
