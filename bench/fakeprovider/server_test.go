package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

// parseSSE parses a whole SSE body strictly: every line is a field line
// ("event: ..." or "data: ...") or the blank line that ends an event, and
// the body ends with a complete event.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var events []sseEvent
	var cur sseEvent
	var hasData bool
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	open := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if !hasData {
				t.Fatalf("event %d has no data line", len(events))
			}
			events = append(events, cur)
			cur, hasData, open = sseEvent{}, false, false
		case strings.HasPrefix(line, "event: "):
			cur.name, open = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			if hasData {
				cur.data += "\n"
			}
			cur.data += strings.TrimPrefix(line, "data: ")
			hasData, open = true, true
		default:
			t.Fatalf("line %q is not an SSE field", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if open {
		t.Fatal("body ends inside an event")
	}
	return events
}

// post sends body to the server's endpoint for format f and returns the
// response body, failing unless the status is 200 and the type SSE.
func post(t *testing.T, s *Server, f format, body string) []byte {
	t.Helper()
	url := s.AnthropicURL() + "/v1/messages"
	if f == formatOpenAI {
		url = s.OpenAIURL() + "/chat/completions"
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	return b
}

func newServer(t *testing.T) *Server {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// anthropicAnswer is what an Anthropic stream said.
type anthropicAnswer struct {
	text, stop        string
	deltas            int
	toolID, toolName  string
	toolArgs          string
	inTokens, outToks int
}

// readAnthropic checks the event sequence of a Messages API stream and
// assembles its answer.
func readAnthropic(t *testing.T, body []byte) anthropicAnswer {
	t.Helper()
	events := parseSSE(t, body)
	var a anthropicAnswer
	var order []string
	for i, ev := range events {
		var e struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message *struct {
				Usage struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock *struct {
				Type, ID, Name string
			} `json:"content_block"`
			Delta *struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("event %d: %v: %s", i, err, ev.data)
		}
		if e.Type != ev.name {
			t.Fatalf("event %d named %q carries type %q", i, ev.name, e.Type)
		}
		if e.Type != "content_block_delta" && e.Type != "ping" {
			order = append(order, e.Type)
		}
		switch e.Type {
		case "message_start":
			a.inTokens = e.Message.Usage.InputTokens
		case "content_block_start":
			if cb := e.ContentBlock; cb.Type == "tool_use" {
				a.toolID, a.toolName = cb.ID, cb.Name
			}
		case "content_block_delta":
			switch e.Delta.Type {
			case "text_delta":
				a.text += e.Delta.Text
				a.deltas++
			case "input_json_delta":
				a.toolArgs += e.Delta.PartialJSON
			default:
				t.Fatalf("unexpected delta type %q", e.Delta.Type)
			}
		case "message_delta":
			a.stop, a.outToks = e.Delta.StopReason, e.Usage.OutputTokens
		}
	}
	want := "message_start content_block_start content_block_stop message_delta message_stop"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("event order %q, want %q", got, want)
	}
	return a
}

// openaiAnswer is what a Chat Completions stream said.
type openaiAnswer struct {
	text, finish     string
	deltas           int
	toolID, toolName string
	toolArgs         string
	usageTokens      int
}

// readOpenAI checks a Chat Completions stream's chunks and assembles its
// answer.
func readOpenAI(t *testing.T, body []byte) openaiAnswer {
	t.Helper()
	events := parseSSE(t, body)
	if n := len(events); n < 2 || events[n-1].data != "[DONE]" {
		t.Fatal("stream does not end with [DONE]")
	}
	var a openaiAnswer
	for i, ev := range events[:len(events)-1] {
		if ev.name != "" {
			t.Fatalf("chunk %d has an event name %q", i, ev.name)
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name, Arguments string
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			t.Fatalf("chunk %d: %v: %s", i, err, ev.data)
		}
		if c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %d object %q", i, c.Object)
		}
		if a.usageTokens != 0 {
			t.Fatalf("chunk %d follows the usage chunk", i)
		}
		if c.Usage != nil {
			if len(c.Choices) != 0 {
				t.Fatal("usage chunk has choices")
			}
			a.usageTokens = c.Usage.TotalTokens
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("chunk %d has %d choices", i, len(c.Choices))
		}
		ch := c.Choices[0]
		if a.finish != "" {
			t.Fatalf("chunk %d follows the finish chunk", i)
		}
		if ch.Delta.Content != nil && *ch.Delta.Content != "" {
			a.text += *ch.Delta.Content
			a.deltas++
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.ID != "" {
				a.toolID, a.toolName = tc.ID, tc.Function.Name
			}
			a.toolArgs += tc.Function.Arguments
		}
		if ch.FinishReason != nil {
			a.finish = *ch.FinishReason
		}
	}
	if a.usageTokens == 0 {
		t.Fatal("no usage chunk")
	}
	return a
}

func wantDeltaText(n int) string {
	var sb strings.Builder
	for i := range n {
		sb.WriteString(deltaText(i))
	}
	return sb.String()
}

func TestDeltaText(t *testing.T) {
	for _, i := range []int{0, 9, 10_000, 99_999_999} {
		if got := deltaText(i); len(got) != DeltaSize {
			t.Errorf("deltaText(%d) = %q, %d bytes", i, got, len(got))
		}
	}
}

func TestAnthropicDeltas(t *testing.T) {
	s := newServer(t)
	for _, n := range []int{1, 200, 10_000} {
		body := fmt.Sprintf(`{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":%q}]}]}`, PromptDeltas(n))
		a := readAnthropic(t, post(t, s, formatAnthropic, body))
		if a.deltas != n || a.text != wantDeltaText(n) {
			t.Fatalf("n=%d: got %d deltas, text of %d bytes", n, a.deltas, len(a.text))
		}
		if a.stop != "end_turn" || a.outToks != n || a.inTokens != inputTokens {
			t.Errorf("n=%d: stop %q, output tokens %d, input tokens %d", n, a.stop, a.outToks, a.inTokens)
		}
	}
}

func TestOpenAIDeltas(t *testing.T) {
	s := newServer(t)
	for _, n := range []int{1, 200, 10_000} {
		body := fmt.Sprintf(`{"model":"m","stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":%q}]}`, PromptDeltas(n))
		a := readOpenAI(t, post(t, s, formatOpenAI, body))
		if a.deltas != n || a.text != wantDeltaText(n) {
			t.Fatalf("n=%d: got %d deltas, text of %d bytes", n, a.deltas, len(a.text))
		}
		if a.finish != "stop" || a.usageTokens != inputTokens+n {
			t.Errorf("n=%d: finish %q, total tokens %d", n, a.finish, a.usageTokens)
		}
	}
}

func TestShortAnswer(t *testing.T) {
	s := newServer(t)
	// A transcript with an earlier long prompt: the last user text counts.
	a := readAnthropic(t, post(t, s, formatAnthropic, `{"messages":[
		{"role":"user","content":"bench:deltas=50"},{"role":"assistant","content":[{"type":"text","text":"x"}]},
		{"role":"user","content":"bench:short"}]}`))
	if a.text != strings.Join(shortDeltas, "") || a.deltas != len(shortDeltas) {
		t.Errorf("anthropic short answer %q in %d deltas", a.text, a.deltas)
	}
	o := readOpenAI(t, post(t, s, formatOpenAI, `{"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`))
	if o.text != strings.Join(shortDeltas, "") || o.deltas != len(shortDeltas) {
		t.Errorf("openai short answer %q in %d deltas", o.text, o.deltas)
	}
}

func TestAnthropicToolRounds(t *testing.T) {
	s := newServer(t)
	first := readAnthropic(t, post(t, s, formatAnthropic, `{"messages":[{"role":"user","content":"bench:tool"}]}`))
	if first.stop != "tool_use" || first.toolName != "bash" || first.toolID == "" || first.deltas != 0 {
		t.Fatalf("first round: %+v", first)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(first.toolArgs), &args); err != nil || args["command"] != ToolCommand || len(args) != 1 {
		t.Fatalf("tool args %q: %v", first.toolArgs, err)
	}
	second := readAnthropic(t, post(t, s, formatAnthropic, fmt.Sprintf(`{"messages":[
		{"role":"user","content":[{"type":"text","text":"bench:tool"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"bash","input":{"command":"echo hi"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":[{"type":"text","text":"hi\n"}]}]}]}`,
		first.toolID, first.toolID)))
	if second.stop != "end_turn" || second.toolName != "" || second.text != "The command printed: hi" {
		t.Fatalf("second round: %+v", second)
	}
	st := s.Stats()
	if st.Requests != 2 || st.ToolCalls != 1 || st.ToolResults != 1 || st.ToolResultsOK != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestOpenAIToolRounds(t *testing.T) {
	s := newServer(t)
	first := readOpenAI(t, post(t, s, formatOpenAI, `{"messages":[{"role":"user","content":"bench:tool"}]}`))
	if first.finish != "tool_calls" || first.toolName != "bash" || first.toolID == "" || first.deltas != 0 {
		t.Fatalf("first round: %+v", first)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(first.toolArgs), &args); err != nil || args["command"] != ToolCommand || len(args) != 1 {
		t.Fatalf("tool args %q: %v", first.toolArgs, err)
	}
	second := readOpenAI(t, post(t, s, formatOpenAI, fmt.Sprintf(`{"messages":[
		{"role":"user","content":"bench:tool"},
		{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo hi\"}"}}]},
		{"role":"tool","tool_call_id":%q,"content":"hi\n\nexit code 0"}]}`, first.toolID, first.toolID)))
	if second.finish != "stop" || second.toolName != "" || second.text != "The command printed: hi\n\nexit code 0" {
		t.Fatalf("second round: %+v", second)
	}
	st := s.Stats()
	if st.Requests != 2 || st.ToolCalls != 1 || st.ToolResults != 1 || st.ToolResultsOK != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestSleepAndReadCalls checks the tool calls an abort is measured
// against, in both formats, and that request bodies are counted.
func TestSleepAndReadCalls(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		prompt, tool, arg, want string
	}{
		{PromptSleep, "bash", "command", SleepCommand},
		{PromptRead("/tmp/huge.txt") + " and more", "read", "path", "/tmp/huge.txt"},
	} {
		body := `{"messages":[{"role":"user","content":` + quote(tc.prompt) + `}]}`
		a := readAnthropic(t, post(t, s, formatAnthropic, body))
		o := readOpenAI(t, post(t, s, formatOpenAI, body))
		for _, got := range []struct{ name, args string }{{a.toolName, a.toolArgs}, {o.toolName, o.toolArgs}} {
			var args map[string]string
			if err := json.Unmarshal([]byte(got.args), &args); err != nil || got.name != tc.tool || args[tc.arg] != tc.want || len(args) != 1 {
				t.Errorf("%q: tool %q args %q (%v)", tc.prompt, got.name, got.args, err)
			}
		}
	}
	before := s.Stats().BodyBytes
	long := `{"messages":[{"role":"user","content":"bench:short ` + strings.Repeat("x", 100_000) + `"}]}`
	post(t, s, formatAnthropic, long)
	if st := s.Stats(); st.BodyBytes-before != int64(len(long)) || st.ToolCalls != 4 {
		t.Errorf("stats %+v, want %d more body bytes", st, len(long))
	}
}

// TestPromptAfterToolResult: Anthropic's format puts a prompt sent after
// an aborted tool call in the user message of the call's result; the
// prompt is answered.
func TestPromptAfterToolResult(t *testing.T) {
	s := newServer(t)
	a := readAnthropic(t, post(t, s, formatAnthropic, `{"messages":[
		{"role":"user","content":"bench:sleep"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"bash","input":{"command":"sleep 30"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"aborted"},{"type":"text","text":"bench:tool"}]}]}`))
	if a.stop != "tool_use" || a.toolName != "bash" {
		t.Errorf("answer %+v, want the bench:tool call", a)
	}
	if st := s.Stats(); st.ToolResults != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestToolResultWithoutOutput(t *testing.T) {
	s := newServer(t)
	a := readOpenAI(t, post(t, s, formatOpenAI, `{"messages":[{"role":"user","content":"bench:tool"},
		{"role":"tool","tool_call_id":"c","content":"sh: echo: not found"}]}`))
	if a.finish != "stop" {
		t.Fatalf("finish %q", a.finish)
	}
	if st := s.Stats(); st.ToolResults != 1 || st.ToolResultsOK != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRejectsBadRequests(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		path, body string
	}{
		{"/v1/messages", `{"messages":[]}`},
		{"/v1/messages", `not json`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"bench:deltas=0"}]}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":7}]}`},
		{"/v1/messages", `{"model":"m"}`},
		{"/v1/messages", `{"messages":[{"role":"user","content":"x"},]}`},
		{"/v1/messages", `{"messages":[{"role":"user","content":"x"}`},
	} {
		resp, err := http.Post(s.AnthropicURL()+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !json.Valid(b) {
			t.Errorf("%s %s: status %d body %s", tc.path, tc.body, resp.StatusCode, b)
		}
	}
	if st := s.Stats(); st.Rejected != 7 || st.Requests != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestLargeAnswerIsCachedAndStreamed(t *testing.T) {
	s := newServer(t)
	s.Prerender(300)
	first := s.cached(formatOpenAI, 300)
	if second := s.cached(formatOpenAI, 300); &first[0] != &second[0] {
		t.Error("long answer rendered twice")
	}
	// A body several write chunks long arrives whole.
	n := 3 * writeChunk / 100
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, PromptDeltas(n))
	if a := readAnthropic(t, post(t, s, formatAnthropic, body)); a.deltas != n {
		t.Errorf("got %d deltas, want %d", a.deltas, n)
	}
}

func TestReadAllLimit(t *testing.T) {
	for _, size := range []int64{-1, 0, 5, 11, 100} {
		b, err := readAllLimit(strings.NewReader("hello world"), size, 11)
		if err != nil || string(b) != "hello world" {
			t.Errorf("size %d: %q, %v", size, b, err)
		}
	}
	if _, err := readAllLimit(strings.NewReader("hello world!"), 12, 11); err == nil {
		t.Error("a body over the limit was read")
	}
}
