package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/anthropic"
	"zot.dev/zot/internal/provider/httpcall"
	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/sysprompt"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

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
func boundAgent(t *testing.T, srv *providertest.BoundServer, id string, clock *boundClock, mid func()) (*Agent, *ToolSet) {
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
	p := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: srv.URL, Options: httpcall.Options{MaxAttempts: 1}})
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
	srv := providertest.NewBoundServer(t, "probe")
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
	_, _, _, reqs := srv.Stats()
	if len(reqs) != 2 {
		t.Fatalf("%d requests for the first prompt", len(reqs))
	}
	system := providertest.Canonical(reqs[0]["system"])

	// Midnight passes: the system prompt stays as it was, and the next
	// prompt tells the model the new date.
	clock.set(time.Date(2026, 11, 28, 0, 1, 0, 0, time.UTC))
	rec := prompt("second")
	_, _, sent, reqs := srv.Stats()
	if got := providertest.Canonical(reqs[2]["system"]); got != system {
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
	_, _, _, reqs = srv.Stats()
	if a, b := toolNames(reqs[4]), toolNames(reqs[5]); a != "probe" || b != "probe" {
		t.Errorf("tools within one prompt: %q then %q", a, b)
	}
	// The next prompt offers it, tells the model, and leaves out the
	// thinking that the new tool list invalidates.
	prompt("fourth")
	_, _, _, reqs = srv.Stats()
	if got := toolNames(reqs[6]); got != "probe,mcp__late__lookup" {
		t.Errorf("tools after the late server: %q", got)
	}
	if n := sentThinking(reqs[6]); n != 0 {
		t.Errorf("%d thinking blocks bound to the old tool list were sent", n)
	}
	msgs6 := reqs[6]["messages"].([]any)
	if note := providertest.Canonical(msgs6[len(msgs6)-1]); !strings.Contains(note, "mcp__late__lookup") {
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
	rejected, foreign, _, reqs := srv.Stats()
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
	srv := providertest.NewBoundServer(t, "probe")
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
	rejected, _, _, reqs := srv.Stats()
	if rejected != 1 || len(reqs) != 5 || sentThinking(reqs[3]) != 0 {
		t.Errorf("%d rejected of %d requests; the retry sent %d thinking blocks", rejected, len(reqs), sentThinking(reqs[3]))
	}
	if err := a.Prompt(context.Background(), "third", nil, nil); err != nil {
		t.Fatalf("the prompt after the recovery: %v", err)
	}

	// Refused again after the drop: no loop.
	srv.RejectAll(true)
	_, _, _, before := srv.Stats()
	err := a.Prompt(context.Background(), "fourth", nil, nil)
	_, _, _, after := srv.Stats()
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
	srv := providertest.NewBoundServer(t, "probe")
	clock := &boundClock{t: time.Date(2026, 11, 27, 23, 58, 0, 0, time.UTC)}
	a, _ := boundAgent(t, srv, "claude-sonnet-5-5", clock, nil)
	if err := a.Prompt(context.Background(), "first", nil, nil); err != nil {
		t.Fatal(err)
	}
	clock.set(time.Date(2026, 11, 28, 0, 1, 0, 0, time.UTC))
	srv.RejectAll(true)
	if err := a.Prompt(context.Background(), "second", nil, nil); err == nil {
		t.Fatal("the refused prompt succeeded")
	}
	srv.RejectAll(false)
	if err := a.Prompt(context.Background(), "third", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, _, _, reqs := srv.Stats()
	last := reqs[len(reqs)-1]["messages"].([]any)
	var user string // the user message of the prompt "third"
	for _, m := range last {
		if got := providertest.Canonical(m.(map[string]any)["content"]); strings.Contains(got, `"third"`) {
			user = got
		}
	}
	if !strings.Contains(user, "Current date (UTC): 2026-11-28") {
		t.Errorf("the prompt after the failed one carries no date note: %s", user)
	}
}
