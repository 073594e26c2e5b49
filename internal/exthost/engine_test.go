package exthost

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/sdk/wire"
)

// loopSession is a real agent loop on the scripted provider, over the
// fake session's tool set, chain and observers: what the host sees of an
// engine Session (which imports this package, so the tests cannot).
type loopSession struct {
	*fakeSession
	agent *agent.Agent
}

// engineSession is a loop on the scripted provider playing script in a
// temporary directory.
func engineSession(t *testing.T, script string) *loopSession {
	t.Helper()
	fs := newFakeSession(t)
	p := filepath.Join(fs.cwd, "script.json")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	prov, err := registry.Build(registry.Spec{Name: "scripted", ScriptPath: p})
	if err != nil {
		t.Fatal(err)
	}
	cat := models.Builtin()
	id, _ := cat.Default("scripted")
	a, err := agent.New(agent.Config{Provider: prov, Model: cat.Resolve("scripted", id), ToolSet: fs.tools, Interceptors: fs.chain})
	if err != nil {
		t.Fatal(err)
	}
	return &loopSession{fakeSession: fs, agent: a}
}

// Messages returns the transcript in its wire form.
func (s *loopSession) Messages() []wire.Message { return s.agent.Messages() }

// prompt runs one prompt and returns its events.
func prompt(t *testing.T, s *loopSession, text string) []wire.Event {
	t.Helper()
	var evs []wire.Event
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.agent.Prompt(ctx, text, nil, func(ev wire.Event) {
		s.emit(ev)
		evs = append(evs, ev)
	})
	if ctx.Err() != nil {
		t.Fatal("the prompt did not end")
	}
	var ae *agent.Error
	if errors.As(err, &ae) {
		// As the engine reports a run's error.
		evs = append(evs, &wire.ErrorEvent{Message: ae.Error(), Code: ae.Code})
	}
	return evs
}

// toolResults returns the text of each tool_result event.
func toolResults(evs []wire.Event) []string {
	var out []string
	for _, ev := range evs {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			var b strings.Builder
			for _, c := range r.Content {
				if tb, ok := c.(*wire.TextBlock); ok {
					b.WriteString(tb.Text)
				}
			}
			out = append(out, b.String())
		}
	}
	return out
}

// callScript makes the model call tool with each args in turn, one call
// per step, then say "done".
func callScript(tool string, args ...string) string {
	var steps []string
	for _, a := range args {
		steps = append(steps, `{"tool_calls":[{"name":"`+tool+`","args":`+a+`}]}`)
	}
	steps = append(steps, `{"text":"done"}`)
	return `{"turns":[{"steps":[` + strings.Join(steps, ",") + `]}]}`
}

// A guard rewrites arguments and blocks calls, in load order: the
// rewritten arguments are what the next guard and the tool see.
func TestInterceptToolCalls(t *testing.T) {
	dir := t.TempDir()
	s := engineSession(t, callScript("py_echo", `{"text":"hi"}`, `{"text":"rm -rf /"}`))
	cfg, _, _ := testConfig(t, pyExt(t, dir, "py", "guard"), nodeExt(t, dir, "nd", "guard"))
	start(t, s, cfg)
	evs := prompt(t, s, "go")
	got := toolResults(evs)
	if len(got) != 2 || got[0] != "echo: guarded hi" || !strings.HasSuffix(got[1], ": refused: rm -rf") {
		t.Fatalf("results %q", got)
	}
}

// An intercept that gets no answer in time lets the call run, unless the
// manifest asks for fail_closed; either way the extension is told to
// cancel, and the agent carries on.
func TestInterceptTimeout(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(map[bool]string{false: "fail-open", true: "fail-closed"}[closed], func(t *testing.T) {
			dir := t.TempDir()
			s := engineSession(t, callScript("read", `{"path":"x"}`))
			cfg, got, _ := testConfig(t, pyExt(t, dir, "hang", "hang_intercept", "fail_closed", closed))
			cfg.InterceptTimeout = 300 * time.Millisecond
			start(t, s, cfg)
			began := time.Now()
			res := toolResults(prompt(t, s, "go"))
			if d := time.Since(began); d > 5*time.Second {
				t.Fatalf("the prompt took %s", d)
			}
			if len(res) != 1 {
				t.Fatalf("results: %q", res)
			}
			blocked := strings.Contains(res[0], "extension hang: no answer within 300ms")
			if blocked != closed {
				t.Fatalf("fail_closed=%v, result %q", closed, res[0])
			}
			got.waitMessage(t, "cancel ")
		})
	}
}

// A turn_start guard blocks the turn; the prompt fails quoting it.
func TestInterceptTurnStart(t *testing.T) {
	dir := t.TempDir()
	s := engineSession(t, `{"turns":[{"steps":[{"text":"never"}]}]}`)
	cfg, _, _ := testConfig(t, pyExt(t, dir, "gate", "turn_guard"))
	start(t, s, cfg)
	var ended *wire.TurnEndEvent
	var failure *wire.ErrorEvent
	for _, ev := range prompt(t, s, "go") {
		switch e := ev.(type) {
		case *wire.TurnEndEvent:
			ended = e
		case *wire.ErrorEvent:
			failure = e
		case *wire.AssistantMessageEvent:
			t.Fatal("the model was called")
		}
	}
	if ended == nil || ended.Stop != wire.StopError || !strings.Contains(ended.Error, "outside business hours") {
		t.Fatalf("turn_end: %+v", ended)
	}
	if failure == nil || failure.Code != wire.CodeBlocked {
		t.Fatalf("error: %+v", failure)
	}
}

// An assistant_message guard replaces what clients are shown; the
// transcript keeps what the model wrote.
func TestInterceptAssistantMessage(t *testing.T) {
	dir := t.TempDir()
	s := engineSession(t, `{"turns":[{"steps":[{"text":"the key is SECRET"}]}]}`)
	cfg, _, _ := testConfig(t, pyExt(t, dir, "red", "redact"))
	start(t, s, cfg)
	var shown string
	for _, ev := range prompt(t, s, "go") {
		if m, ok := ev.(*wire.AssistantMessageEvent); ok {
			shown = wireText(m.Content)
		}
	}
	if shown != "the key is [redacted]" {
		t.Fatalf("shown %q", shown)
	}
	msgs := s.Messages()
	kept, _ := json.Marshal(msgs[len(msgs)-1])
	if !strings.Contains(string(kept), "the key is SECRET") {
		t.Fatalf("transcript: %s", kept)
	}
}

// The first prompt waits for the extensions' handshakes, so their tools
// are offered to the first model call; lifecycle events of a real prompt
// reach subscribers in order.
func TestFirstPromptWaitsForExtensions(t *testing.T) {
	dir := t.TempDir()
	s := engineSession(t, callScript("py_echo", `{"text":"first"}`))
	cfg, got, _ := testConfig(t, pyExt(t, dir, "py", "ok"))
	start(t, s, cfg)
	// No WaitReady: the prompt is sent while the extension starts.
	res := toolResults(prompt(t, s, "go"))
	if len(res) != 1 || res[0] != "echo: first" {
		t.Fatalf("results: %q", res)
	}
	got.waitMessage(t, "event turn_end end_turn")
	var order []string
	for _, m := range got.messages() {
		if i := strings.Index(m, "event "); i >= 0 {
			order = append(order, m[i:])
		}
	}
	want := "event session_start |event turn_start 1|event assistant_message |event tool_call py_echo|event turn_end tool_use|event turn_start 2|event assistant_message done|event turn_end end_turn"
	if strings.Join(order, "|") != want {
		t.Fatalf("events:\n got %s\nwant %s", strings.Join(order, "|"), want)
	}
}

// Of two extensions offering one tool or command, the one loaded first
// keeps it, whichever is ready first; a built-in tool beats both.
func TestConflictsGoByLoadOrder(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, log := testConfig(t, pyExt(t, dir, "first", "dup"), pyExt(t, dir, "second", "dup"), manifest(t, dir, "shadow", map[string]any{
		"exec": goextBin, "args": []string{"shadow"},
	}))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	if r := runTool(t, sess, "dup_tool", `{}`); text(r) != "from first" {
		t.Fatalf("dup_tool answered %q", text(r))
	}
	cmds := h.Commands()
	owner := map[string]string{}
	for _, c := range cmds {
		owner[c.Name] = c.Extension
	}
	if owner["dup"] != "first" {
		t.Fatalf("commands: %+v", cmds)
	}
	if !strings.Contains(sess.conflicts(), "tool dup_tool of ext:second left out for ext:first") {
		t.Fatalf("conflicts: %s", sess.conflicts())
	}
	if !strings.Contains(log.String(), "extension second: command /dup is left out: extension first") {
		t.Fatalf("log: %s", log.String())
	}
}

// Reload stops the extensions and starts them again from disk.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	folder := pyExt(t, dir, "py", "ok")
	cfg, _, _ := testConfig(t, folder)
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	old := pidOf(t, h, "py")
	runTool(t, sess, "py_echo", `{}`)
	if err := h.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, old, 2*time.Second)
	if pidOf(t, h, "py") == old {
		t.Fatal("the same process after reload")
	}
	if r := runTool(t, sess, "py_echo", `{"text":"again"}`); text(r) != "echo: again" {
		t.Fatalf("after reload: %q", text(r))
	}
	if n := sess.chain.Len(); n != 2 {
		t.Fatalf("%d interceptors after reload, want the gate and one", n)
	}
}
