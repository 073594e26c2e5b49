package tui

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/acpclient"
	"zot.dev/zot/internal/tui/editor"
	"zot.dev/zot/internal/tui/style"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

// screenTest drives a model without a terminal: what it prints goes to
// scrollback at once, as the terminal would put it.
type screenTest struct {
	t          *testing.T
	m          *model
	scrollback []string
}

func newScreenTest(t *testing.T, w, h int, theme style.Options) *screenTest {
	m := newModel(Options{CWD: "/work", Theme: theme, Width: w, Height: h})
	st := &screenTest{t: t, m: m}
	st.send(tea.WindowSizeMsg{Width: w, Height: h})
	modes := &acp.SessionModeState{CurrentModeID: "ask", AvailableModes: []acp.SessionMode{{ID: "ask"}, {ID: "accept_edits"}, {ID: "auto"}, {ID: "read_only"}}}
	st.send(readyMsg{s: acpclient.Session{ID: "s1", Modes: modes, Options: []acpclient.ConfigOption{{ID: "model", CurrentValue: "claude-sonnet-4-5"}}}})
	return st
}

// send gives the model a message, then lets its printing finish.
func (st *screenTest) send(msg tea.Msg) {
	st.m.Update(msg)
	for st.m.printing {
		st.scrollback = append(st.scrollback, st.m.inFlight...)
		st.m.Update(printedMsg{})
	}
}

// sendCmd runs a command the model returned and sends the editor's
// submit message it answers (other messages of commands are left: they
// call the agent).
func (st *screenTest) sendCmd(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if msg, ok := cmd().(editor.SubmitMsg); ok {
		st.send(msg)
	}
}

func (st *screenTest) update(u acp.SessionUpdate) {
	st.send(eventMsg{acpclient.Update{SessionID: "s1", Update: u}})
}

func (st *screenTest) text(s string) {
	st.update(acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: s}}}})
}

// screen is the scrollback, a marker, and the live region, without
// colours and with trailing spaces cut.
func (st *screenTest) screen() string {
	var b strings.Builder
	for _, l := range st.scrollback {
		b.WriteString(strings.TrimRight(ansi.Strip(l), " ") + "\n")
	}
	b.WriteString("~~~~ live region ~~~~\n")
	for _, l := range strings.Split(st.m.screen(), "\n") {
		b.WriteString(strings.TrimRight(ansi.Strip(l), " ") + "\n")
	}
	return b.String()
}

// golden compares the screen with testdata/name.golden.
func (st *screenTest) golden(name string) {
	st.t.Helper()
	got := st.screen()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			st.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			st.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		st.t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		st.t.Errorf("screen %s differs from %s (go test -update rewrites it)\n--- got:\n%s--- want:\n%s", name, path, got, want)
	}
}

// A turn as the agent streams it: the prompt, thinking, Markdown with a
// code block, a tool call waiting for approval, then its output after
// the answer, at 80×24 with Unicode and in plain ASCII.
func TestTurnScreens(t *testing.T) {
	for _, tc := range []struct {
		name  string
		theme style.Options
	}{{"unicode", style.Options{NoColor: true}}, {"ascii", style.Options{NoColor: true, ASCII: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			st := newScreenTest(t, 80, 24, tc.theme)
			st.m.in.SetValue("fix the test")
			st.sendCmd(st.m.key(tea.KeyPressMsg{Code: tea.KeyEnter}))
			st.m.started = time.Now()
			st.update(acp.SessionUpdate{AgentThoughtChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "The test fails because"}}}})
			st.text("## The cause\n\nThe **loop** ends one step early: `i < n-1`.\n\n```go\nfor i := 0; i < n; i++ { // all of them\n")
			st.text("\tsum += xs[i]\n}\n```\n\n- first point\n- second")
			st.golden("turn-streaming-" + tc.name)

			st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "c1", Title: "edit sum.go", Kind: acp.ToolKindEdit, Status: acp.ToolCallStatusPending,
				RawInput: json.RawMessage(`{"path":"sum.go","edits":[{"old_text":"i < n-1","new_text":"i < n"}]}`)}})
			title := "edit sum.go"
			st.send(eventMsg{acpclient.Permission{Request: acp.RequestPermissionRequest{SessionID: "s1",
				ToolCall: acp.ToolCallUpdate{ToolCallID: "c1", Title: &title, RawInput: json.RawMessage(`{"path":"sum.go","edits":[{"old_text":"i < n-1","new_text":"i < n"}]}`)},
				Options: []acp.PermissionOption{{OptionID: "allow_once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
					{OptionID: "allow_always", Name: "Allow always", Kind: acp.PermissionOptionKindAllowAlways},
					{OptionID: "reject_once", Name: "Reject once", Kind: acp.PermissionOptionKindRejectOnce},
					{OptionID: "reject_always", Name: "Reject always", Kind: acp.PermissionOptionKindRejectAlways}}},
				Answer: func(string) {}}})
			st.golden("turn-approval-" + tc.name)

			st.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
			old := "for i := 0; i < n-1; i++ {\n\tsum += xs[i]\n}\n"
			st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "c1", Status: acp.ToolCallStatusCompleted,
				Content: []acp.ToolCallContent{{Diff: &acp.Diff{Path: "/work/sum.go", OldText: &old, NewText: strings.Replace(old, "n-1", "n", 1)}}}}})
			st.update(acp.SessionUpdate{UsageUpdate: &acp.UsageUpdate{Used: 12345, Size: 200000, Cost: &acp.Cost{Amount: 0.0123, Currency: "USD"}}})
			st.text("Fixed.")
			st.send(promptDoneMsg{stop: acp.StopReasonEndTurn})
			st.golden("turn-done-" + tc.name)
		})
	}
}

// Ctrl-C during a turn asks the agent to stop and says a second one
// exits; a second within a second exits; Ctrl-C while idle exits.
func TestCtrlC(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy = true
	cmd := st.m.key(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if cmd == nil || st.m.quit || !st.m.cancelled {
		t.Fatalf("first ctrl+c during a turn: quit %v, cancelled %v", st.m.quit, st.m.cancelled)
	}
	if !strings.Contains(st.screen(), "Press Ctrl-C again to exit.") {
		t.Errorf("no hint after the first ctrl+c:\n%s", st.screen())
	}
	st.m.key(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if !st.m.quit {
		t.Errorf("a second ctrl+c within a second did not exit")
	}

	idle := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	idle.m.key(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if !idle.m.quit {
		t.Errorf("ctrl+c while idle did not exit")
	}
}

// Ctrl-D exits on an empty input only.
func TestCtrlD(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.in.SetValue("ab")
	st.m.key(tea.KeyPressMsg{Code: tea.KeyHome})
	st.m.key(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	if st.m.quit || st.m.in.Value() != "b" {
		t.Fatalf("ctrl+d on %q: quit %v, input %q", "ab", st.m.quit, st.m.in.Value())
	}
	st.m.in.Reset()
	st.m.key(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	if !st.m.quit {
		t.Errorf("ctrl+d on an empty input did not exit")
	}
}

// A failed turn shows the agent's error; the session stays usable.
func TestTurnError(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy = true
	st.send(promptDoneMsg{err: errors.New("the provider answered 401: invalid x-api-key")})
	if st.m.busy || !strings.Contains(st.screen(), "invalid x-api-key") {
		t.Errorf("after a failed turn, busy %v:\n%s", st.m.busy, st.screen())
	}
}
