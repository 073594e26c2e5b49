package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/anthropic"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// boundServer is a loopback Anthropic Messages endpoint that checks the
// thinking blocks sent back as the vendor's preserved thinking does
// (platform.claude.com/docs/en/build-with-claude/preserved-thinking/
// prefix-checks): each block it signed is bound to the model and to the
// top-level system, tools and earlier messages of the request that
// produced it (cache_control left out of the comparison); a block whose
// prefix changed fails the request with the vendor's 400. A block of
// another model is dropped without an error, which the server counts, so
// that a test can see zot never sends one. Its answers follow the stream
// events of @anthropic-ai/sdk 1.14.0 (RawMessageStreamEvent): a prompt
// gets thinking and a call of the tool "probe", a tool result gets
// thinking and a text answer, a request without tools (a compaction's
// summary) gets text.
type boundServer struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	issued   map[string]issued // signature → what it is bound to
	requests []map[string]any
	rejected int // 400s for a failed prefix check
	foreign  int // blocks of another model that were sent
	sent     int // thinking blocks sent back and accepted
	// alwaysReject answers every request with the prefix-check 400.
	alwaysReject bool
}

type issued struct{ model, prefix string }

// boundError is the vendor's answer to a failed prefix check.
const boundError = `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid ` + "`signature`" + ` in ` + "`thinking`" + ` block. The block is bound to a different conversation."}}`

func newBoundServer(t *testing.T) *boundServer {
	s := &boundServer{t: t, issued: map[string]issued{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.srv.Close)
	return s
}

// canonical is the JSON of v without cache_control members.
func canonical(v any) string {
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if k != "cache_control" {
					out[k] = strip(e)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return string(b)
}

func (s *boundServer) handle(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		s.t.Errorf("request is not JSON: %s", data)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, body)
	model, _ := body["model"].(string)
	msgs, _ := body["messages"].([]any)
	reject := s.alwaysReject
	for k, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, b := range content {
			block := b.(map[string]any)
			if block["type"] != "thinking" && block["type"] != "redacted_thinking" {
				continue
			}
			sig, _ := block["signature"].(string)
			rec, ok := s.issued[sig]
			switch {
			case !ok:
				reject = true
			case rec.model != model:
				s.foreign++
			case rec.prefix != canonical([]any{body["system"], body["tools"], msgs[:k]}):
				reject = true
			default:
				s.sent++
			}
		}
	}
	if reject {
		s.rejected++
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, boundError)
		return
	}
	sig := fmt.Sprintf("sig-%d", len(s.issued)+1)
	s.issued[sig] = issued{model: model, prefix: canonical([]any{body["system"], body["tools"], msgs})}
	last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	afterTool := last[len(last)-1].(map[string]any)["type"] == "tool_result"
	w.Header().Set("content-type", "text/event-stream")
	var ev []string
	add := func(v string) { ev = append(ev, v) }
	add(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"` + model + `","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	if body["tools"] == nil {
		add(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		add(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Summary of the conversation."}}`)
		add(`{"type":"content_block_stop","index":0}`)
		add(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`)
	} else {
		add(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		add(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Thinking it over."}}`)
		add(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + sig + `"}}`)
		add(`{"type":"content_block_stop","index":0}`)
		if afterTool {
			add(`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
			add(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done."}}`)
			add(`{"type":"content_block_stop","index":1}`)
			add(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`)
		} else {
			add(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_` + sig + `","name":"probe","input":{}}}`)
			add(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}`)
			add(`{"type":"content_block_stop","index":1}`)
			add(`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`)
		}
	}
	add(`{"type":"message_stop"}`)
	for _, e := range ev {
		var typ struct{ Type string }
		json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
}

// stats returns the server's counters and the requests it got so far.
func (s *boundServer) stats() (rejected, foreign, sent int, reqs []map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected, s.foreign, s.sent, append([]map[string]any(nil), s.requests...)
}

// probe is a tool that answers "ok" and runs a hook first.
type probe struct {
	name string
	run  func()
}

func (p probe) Name() string            { return p.name }
func (p probe) Description() string     { return "Answer ok. Used by tests." }
func (p probe) Schema() json.RawMessage { return json.RawMessage(`{"type":"object","properties":{}}`) }
func (p probe) Run(context.Context, tools.Call) (tools.Result, error) {
	if p.run != nil {
		p.run()
	}
	return tools.Text("ok"), nil
}

// boundClock is a settable clock.
type boundClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *boundClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *boundClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// boundAgent returns an agent on the real Anthropic provider against srv,
// with zot's system prompt rebuilt from the current tools and clock (as
// the engine builds it), on model id.
func boundAgent(t *testing.T, srv *boundServer, id string, clock *boundClock, mid func()) (*Agent, *ToolSet) {
	t.Helper()
	set, err := NewToolSet([]tools.Tool{probe{name: "probe", run: mid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		seen  *ToolView
		build func() string
	)
	system := func() string {
		v := set.View()
		mu.Lock()
		defer mu.Unlock()
		if v != seen {
			seen = v
			build = sysprompt.Builder(sysprompt.Options{Tools: v.Tools(), CWD: "/work", Now: clock.now})
		}
		return build()
	}
	p := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: srv.srv.URL, Options: httpcall.Options{MaxAttempts: 1}})
	a, err := New(Config{Provider: p, Model: models.Builtin().Resolve("anthropic", id), ToolSet: set, System: system, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	return a, set
}

// sentThinking counts the thinking blocks of a captured request.
func sentThinking(req map[string]any) int {
	n := 0
	for _, m := range req["messages"].([]any) {
		for _, b := range m.(map[string]any)["content"].([]any) {
			if b.(map[string]any)["type"] == "thinking" {
				n++
			}
		}
	}
	return n
}

// toolNames are the tools a captured request offered.
func toolNames(req map[string]any) string {
	var names []string
	list, _ := req["tools"].([]any)
	for _, t := range list {
		names = append(names, t.(map[string]any)["name"].(string))
	}
	return strings.Join(names, ",")
}

// TestBoundThinkingNeverLocksTheSession: a conversation with a model that
// binds its thinking to the conversation goes on across a midnight, a
// tool set that grows mid-prompt and between prompts (a late MCP server),
// a compaction and a model switch without one request failing the
// vendor's prefix check, and without zot sending another model's thinking.
func TestBoundThinkingNeverLocksTheSession(t *testing.T) {
	srv := newBoundServer(t)
	clock := &boundClock{t: time.Date(2026, 11, 27, 23, 58, 0, 0, time.UTC)}
	var set *ToolSet
	var once sync.Once
	late := func() {} // replaced below: a tool arriving while a prompt runs
	a, set := boundAgent(t, srv, "claude-sonnet-5-5", clock, func() { late() })
	if !a.Model().BoundThinking {
		t.Fatal("claude-sonnet-5-5 should bind its thinking")
	}
	prompt := func(text string) *recorder {
		t.Helper()
		rec := newRecorder(t)
		if err := a.Prompt(context.Background(), text, nil, rec.emit); err != nil {
			t.Fatalf("prompt %q: %v", text, err)
		}
		return rec
	}

	prompt("first")
	_, _, _, reqs := srv.stats()
	if len(reqs) != 2 {
		t.Fatalf("%d requests for the first prompt", len(reqs))
	}
	system := canonical(reqs[0]["system"])

	// Midnight passes: the system prompt stays as it was, and the next
	// prompt tells the model the new date.
	clock.set(time.Date(2026, 11, 28, 0, 1, 0, 0, time.UTC))
	rec := prompt("second")
	_, _, sent, reqs := srv.stats()
	if got := canonical(reqs[2]["system"]); got != system {
		t.Errorf("the system prompt changed at midnight:\n%s\nwas\n%s", got, system)
	}
	if sent == 0 || sentThinking(reqs[2]) != 2 {
		t.Errorf("the earlier thinking was not sent back after midnight (%d blocks)", sentThinking(reqs[2]))
	}
	last := reqs[2]["messages"].([]any)
	note := last[len(last)-1].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(note, "Current date (UTC): 2026-11-28") {
		t.Errorf("no date note: %q", note)
	}
	if um := eventsOf[*wire.UserMessageEvent](rec)[0]; len(um.Content) != 1 || textOf(um.Content) != "second" {
		t.Errorf("the note reached the user_message event: %s", um.AppendJSON(nil))
	}

	// A tool arrives while a prompt runs (an MCP server that started
	// late): the prompt's steps keep offering the tools of its first step.
	late = func() {
		once.Do(func() { set.Set("mcp:late", []tools.Tool{probe{name: "mcp__late__lookup"}}) })
	}
	prompt("third")
	_, _, _, reqs = srv.stats()
	if a, b := toolNames(reqs[4]), toolNames(reqs[5]); a != "probe" || b != "probe" {
		t.Errorf("tools within one prompt: %q then %q", a, b)
	}
	// The next prompt offers it, tells the model, and leaves out the
	// thinking that the new tool list invalidates.
	prompt("fourth")
	_, _, _, reqs = srv.stats()
	if got := toolNames(reqs[6]); got != "probe,mcp__late__lookup" {
		t.Errorf("tools after the late server: %q", got)
	}
	if n := sentThinking(reqs[6]); n != 0 {
		t.Errorf("%d thinking blocks bound to the old tool list were sent", n)
	}
	msgs6 := reqs[6]["messages"].([]any)
	if note := canonical(msgs6[len(msgs6)-1]); !strings.Contains(note, "mcp__late__lookup") {
		t.Errorf("no note of the new tool: %s", note)
	}

	// Compaction keeps no thinking; the conversation goes on.
	if err := a.Compact(context.Background(), "", nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range a.Transcript() {
		for _, b := range m.Content {
			if _, ok := b.(*llm.ThinkingBlock); ok {
				t.Fatal("compaction kept thinking")
			}
		}
	}
	prompt("fifth")

	// A model switch: the other model's thinking is not sent.
	opus := models.Builtin().Resolve("anthropic", "claude-opus-5-5")
	if err := a.SetModel(opus); err != nil {
		t.Fatal(err)
	}
	prompt("sixth")
	prompt("seventh")
	rejected, foreign, _, reqs := srv.stats()
	if rejected != 0 || foreign != 0 {
		t.Errorf("%d requests failed the prefix check, %d blocks of another model were sent (of %d requests)", rejected, foreign, len(reqs))
	}
	if n := sentThinking(reqs[len(reqs)-1]); n == 0 {
		t.Error("the new model's own thinking was not sent back")
	}
	for _, m := range a.Transcript() {
		for _, b := range m.Content {
			if tb, ok := b.(*llm.ThinkingBlock); ok && (tb.Model == "" || tb.Prefix == "") {
				t.Errorf("a thinking block without its model and prefix: %+v", tb)
			}
		}
	}
}

// TestBoundThinkingRejectedRecoversOnce: thinking the provider refuses as
// bound to another conversation (here blocks of a transcript written
// before zot recorded their prefix, under yesterday's system prompt) is
// dropped and the request sent once more; a provider that refuses again
// ends the prompt with the error after exactly two requests.
func TestBoundThinkingRejectedRecoversOnce(t *testing.T) {
	srv := newBoundServer(t)
	clock := &boundClock{t: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	a, _ := boundAgent(t, srv, "claude-sonnet-5-5", clock, nil)
	if err := a.Prompt(context.Background(), "first", nil, nil); err != nil {
		t.Fatal(err)
	}
	// The session is resumed a day later from a file that kept no prefix.
	old := a.Transcript()
	for _, m := range old {
		for _, b := range m.Content {
			if tb, ok := b.(*llm.ThinkingBlock); ok {
				tb.Prefix = ""
			}
		}
	}
	clock.set(clock.now().Add(24 * time.Hour))
	if err := a.SetTranscript(old); err != nil {
		t.Fatal(err)
	}
	if err := a.Prompt(context.Background(), "second", nil, nil); err != nil {
		t.Fatalf("the session is locked: %v", err)
	}
	rejected, _, _, reqs := srv.stats()
	if rejected != 1 || len(reqs) != 5 || sentThinking(reqs[3]) != 0 {
		t.Errorf("%d rejected of %d requests; the retry sent %d thinking blocks", rejected, len(reqs), sentThinking(reqs[3]))
	}
	if err := a.Prompt(context.Background(), "third", nil, nil); err != nil {
		t.Fatalf("the prompt after the recovery: %v", err)
	}

	// Refused again after the drop: no loop.
	srv.mu.Lock()
	srv.alwaysReject = true
	srv.mu.Unlock()
	_, _, _, before := srv.stats()
	err := a.Prompt(context.Background(), "fourth", nil, nil)
	_, _, _, after := srv.stats()
	if err == nil || !strings.Contains(err.Error(), "bound to a different conversation") || len(after)-len(before) != 2 {
		t.Errorf("error %v after %d requests", err, len(after)-len(before))
	}
}

// TestBoundNoteSurvivesAFailedPrompt: the note telling a model with bound
// thinking what changed in its system prompt (a new date) travels in the
// prompt's user message; a prompt that fails takes that message out of
// the transcript again, so the next prompt carries the note instead of the
// model never learning of the change.
func TestBoundNoteSurvivesAFailedPrompt(t *testing.T) {
	srv := newBoundServer(t)
	clock := &boundClock{t: time.Date(2026, 11, 27, 23, 58, 0, 0, time.UTC)}
	a, _ := boundAgent(t, srv, "claude-sonnet-5-5", clock, nil)
	if err := a.Prompt(context.Background(), "first", nil, nil); err != nil {
		t.Fatal(err)
	}
	clock.set(time.Date(2026, 11, 28, 0, 1, 0, 0, time.UTC))
	srv.mu.Lock()
	srv.alwaysReject = true
	srv.mu.Unlock()
	if err := a.Prompt(context.Background(), "second", nil, nil); err == nil {
		t.Fatal("the refused prompt succeeded")
	}
	srv.mu.Lock()
	srv.alwaysReject = false
	srv.mu.Unlock()
	if err := a.Prompt(context.Background(), "third", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, _, _, reqs := srv.stats()
	last := reqs[len(reqs)-1]["messages"].([]any)
	var user string // the user message of the prompt "third"
	for _, m := range last {
		if got := canonical(m.(map[string]any)["content"]); strings.Contains(got, `"third"`) {
			user = got
		}
	}
	if !strings.Contains(user, "Current date (UTC): 2026-11-28") {
		t.Errorf("the prompt after the failed one carries no date note: %s", user)
	}
}
