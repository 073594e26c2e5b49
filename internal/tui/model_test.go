package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"zot.dev/zot/internal/tui/tuitest"
)

// update is the -update flag (tuitest): golden screens are written.
var update = tuitest.Update

// screenTest drives a model without a terminal: what it prints goes to
// scrollback at once, as the terminal would put it.
type screenTest struct {
	t          *testing.T
	m          *model
	scrollback []string
}

func newScreenTest(t *testing.T, w, h int, theme style.Options) *screenTest {
	m := newModel(context.Background(), Options{CWD: "/work", Theme: theme, Width: w, Height: h})
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
			st.update(acp.SessionUpdate{UsageUpdate: &acp.UsageUpdate{Used: 12345, Size: 200000, Cost: &acp.Cost{Amount: 0.0123, Currency: "USD"},
				Meta: map[string]any{"zot": map[string]any{"tokens": map[string]any{"input": 20000.0, "cacheRead": 4000.0, "output": 1500.0}}}}})
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
	st.m.busy, st.m.started = true, time.Now()
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
	st.m.busy, st.m.started = true, time.Now()
	st.send(promptDoneMsg{err: errors.New("the provider answered 401: invalid x-api-key")})
	if st.m.busy || !strings.Contains(st.screen(), "invalid x-api-key") {
		t.Errorf("after a failed turn, busy %v:\n%s", st.m.busy, st.screen())
	}
}

// A 10,000-line answer reaches the scrollback whole, in order, while the
// live region never grows past the screen.
func TestLongAnswer(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	for i := range 10_000 {
		st.text(fmt.Sprintf("line %d\n", i))
		if i%1000 == 0 {
			if n := strings.Count(st.m.screen(), "\n") + 1; n > 24 {
				t.Fatalf("the live region has %d lines at line %d", n, i)
			}
		}
	}
	st.send(promptDoneMsg{stop: acp.StopReasonEndTurn})
	var got []string
	for _, l := range st.scrollback {
		if strings.HasPrefix(l, "line ") {
			got = append(got, l)
		}
	}
	if len(got) != 10_000 || got[0] != "line 0" || got[9999] != "line 9999" {
		t.Fatalf("%d lines in the scrollback, first %q", len(got), got[0])
	}
	for i, l := range got {
		if l != fmt.Sprintf("line %d", i) {
			t.Fatalf("line %d is %q", i, l)
		}
	}
}

// A resize mid-answer reflows what is still live (the unfinished line,
// the input, the footer) to the new width; the screen fits at 200×50
// and at 40×10.
func TestResize(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	st.text(strings.Repeat("word ", 60))
	for _, size := range [][2]int{{200, 50}, {40, 10}, {80, 24}} {
		st.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(st.m.screen(), "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: a line of %d cells: %q", size[0], size[1], w, ansi.Strip(l))
			}
		}
	}
	st.send(tea.WindowSizeMsg{Width: 200, Height: 50})
	st.golden("resize-200x50")
}

// A thousand turns leave nothing behind in the model: what was printed
// is the terminal's.
func TestManyTurns(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	for i := range 1000 {
		st.m.in.SetValue(fmt.Sprintf("prompt %d", i))
		st.sendCmd(st.m.key(tea.KeyPressMsg{Code: tea.KeyEnter}))
		st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: acp.ToolCallId(fmt.Sprint("c", i)), Title: "ls", Status: acp.ToolCallStatusInProgress}})
		st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallId(fmt.Sprint("c", i)), Status: acp.ToolCallStatusCompleted}})
		st.text("answer\n\nmore")
		st.send(promptDoneMsg{stop: acp.StopReasonEndTurn})
		st.scrollback = st.scrollback[:0]
	}
	if len(st.m.segs) != 0 || len(st.m.toPrint) != 0 || len(st.m.inFlight) != 0 || st.m.busy {
		t.Errorf("after 1000 turns: %d segments, %d lines to print, %d in flight, busy %v", len(st.m.segs), len(st.m.toPrint), len(st.m.inFlight), st.m.busy)
	}
}

// BenchmarkStream is a streamed answer at the model: a chunk of a few
// words, then the live region drawn, as a frame would. It reports
// chunks per second.
func BenchmarkStream(b *testing.B) {
	st := newScreenTest(&testing.T{}, 120, 40, style.Options{})
	st.m.busy, st.m.started = true, time.Now()
	chunks := []string{"The quick **brown** fox ", "jumps over `the` lazy ", "dog.\n", "- an item with *emphasis*\n", "```go\nfunc f() { return 1 }\n```\n"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.text(chunks[i%len(chunks)])
		if i%10 == 0 {
			_ = st.m.screen()
		}
		if i%1000 == 999 {
			st.scrollback = st.scrollback[:0]
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkKeystroke is one key typed into the input and the screen
// drawn, with a long turn's live region above it.
func BenchmarkKeystroke(b *testing.B) {
	st := newScreenTest(&testing.T{}, 120, 40, style.Options{})
	st.m.busy, st.m.started = true, time.Now()
	st.text(strings.Repeat("some words of the answer ", 40))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
		_ = st.m.screen()
		if i%100 == 99 {
			st.m.in.Reset()
		}
	}
}

// The agent ending the connection (a daemon that stopped) ends the
// client with an error; leaving first is not one.
func TestConnectionLost(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.send(lostMsg{})
	if !st.m.quit || st.m.fatal == nil || !strings.Contains(st.m.fatal.Error(), "closed the connection") {
		t.Errorf("quit %v, fatal %v", st.m.quit, st.m.fatal)
	}
	left := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	left.m.key(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	left.send(lostMsg{})
	if left.m.fatal != nil {
		t.Errorf("after ctrl+d the connection's end is an error: %v", left.m.fatal)
	}
}

// A running call's output (zot's _meta.zot.output) shows live, its last
// lines; the result's content replaces it.
func TestLiveToolOutput(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "c1", Title: "bash: make", Status: acp.ToolCallStatusInProgress}})
	for i := 1; i <= 30; i++ {
		st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "c1",
			Meta: map[string]any{"zot": map[string]any{"output": fmt.Sprintf("step %d\n", i)}}}})
	}
	screen := st.screen()
	if !strings.Contains(screen, "step 30") || !strings.Contains(screen, "step 21") || strings.Contains(screen, "step 20\n") {
		t.Errorf("the live output is not the last 10 lines:\n%s", screen)
	}
	st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "c1", Status: acp.ToolCallStatusCompleted,
		Content: []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "all done\n"}}}}}}})
	if got := strings.Join(st.scrollback, "\n"); !strings.Contains(got, "all done") || strings.Contains(got, "step 30") {
		t.Errorf("the result did not replace the live output:\n%s", got)
	}
}

// A command's text marked insert goes into the input; one marked
// display is printed as a note, not as the model's answer.
func TestCommandInsertAndDisplay(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	chunk := func(text, action string) *acp.ContentChunk {
		return &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}, Meta: map[string]any{"zot": map[string]any{"action": action}}}
	}
	st.update(acp.SessionUpdate{AgentMessageChunk: chunk("git status", "insert")})
	if st.m.in.Value() != "git status" {
		t.Errorf("input %q after an insert", st.m.in.Value())
	}
	st.update(acp.SessionUpdate{AgentMessageChunk: chunk("Commands:\n/help: List the commands", "display")})
	if got := ansi.Strip(strings.Join(st.scrollback, "\n")); !strings.Contains(got, "Commands:\n/help: List the commands") {
		t.Errorf("a display is not in the scrollback:\n%s", got)
	}
}

// Prompts sent during a turn wait and go in order after it; an
// interrupt drops them.
func TestQueuedPrompts(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	for _, p := range []string{"one", "two"} {
		st.m.in.SetValue(p)
		st.sendCmd(st.m.key(tea.KeyPressMsg{Code: tea.KeyEnter}))
	}
	if len(st.m.queued) != 2 || !strings.Contains(st.screen(), "2 queued") {
		t.Fatalf("queued %q:\n%s", st.m.queued, st.screen())
	}
	st.m.Update(promptDoneMsg{stop: acp.StopReasonEndTurn})
	if !st.m.busy || len(st.m.queued) != 1 || st.m.queued[0] != "two" {
		t.Fatalf("after the turn: busy %v, queued %q", st.m.busy, st.m.queued)
	}
	st.m.cancel()
	if len(st.m.queued) != 0 || !strings.Contains(st.m.status, "1 queued prompt(s) dropped") {
		t.Errorf("after an interrupt: queued %q, status %q", st.m.queued, st.m.status)
	}
}

// /steer during a turn is not queued: it goes to the running turn (a
// call of its own), and the queued count offers it.
func TestSteerDuringTurn(t *testing.T) {
	st := newScreenTest(t, 100, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	st.m.queued = []string{"later"}
	if cmd := st.m.send("/steer use v2"); cmd == nil {
		t.Fatal("/steer during a turn did nothing")
	}
	if len(st.m.queued) != 1 {
		t.Errorf("/steer was queued: %q", st.m.queued)
	}
	if !strings.Contains(st.screen(), "1 queued (/steer text: now)") {
		t.Errorf("the status does not offer /steer:\n%s", st.screen())
	}
}

// Whatever the turn shows, the live region leaves a chunk of the screen
// free: lines are inserted above it by scrolling, and a region too tall
// for them would scroll its own top into the scrollback among them.
func TestLiveRegionLeavesRoomForAPrint(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	check := func(what string) {
		t.Helper()
		if h := strings.Count(st.m.screen(), "\n") + 1; h+printChunk(24) > 24 {
			t.Fatalf("%s: a live region of %d rows leaves no room for a chunk of %d on 24 rows:\n%s", what, h, printChunk(24), st.m.screen())
		}
	}
	st.text(strings.Repeat("a long paragraph without its end ", 200))
	check("a long partial line")
	st.text("\n\n")
	st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "c1", Title: "bash", Status: acp.ToolCallStatusInProgress,
		Content: []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: strings.Repeat("out\n", 50)}}}}}}})
	check("a running call")
	for range 30 {
		st.m.Update(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	}
	check("a tall input")
}

// The inbox hands every event over in order, in batches, and holds the
// reader back when full instead of growing.
func TestInboxBatchesInOrder(t *testing.T) {
	wakes := make(chan eventsMsg, 1)
	b := newInbox(func(m eventsMsg) { wakes <- m })
	const n = 3 * maxQueued
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			b.put(acpclient.ConfigUpdate{SessionID: fmt.Sprint(i)})
		}
	}()
	next, batches := 0, 0
	for next < n {
		<-wakes
		evs := b.take()
		if len(evs) > maxQueued {
			t.Fatalf("a batch of %d events, more than %d", len(evs), maxQueued)
		}
		batches++
		for _, ev := range evs {
			if got := ev.(acpclient.ConfigUpdate).SessionID; got != fmt.Sprint(next) {
				t.Fatalf("event %s where %d was next", got, next)
			}
			next++
		}
	}
	<-done
	b.close()
	b.put(acpclient.ConfigUpdate{}) // after close: dropped, does not wait
	t.Logf("%d events in %d batches", n, batches)
}

// /help fits the screen: a row wider than it goes on under its
// description.
func TestHelpFitsTheWidth(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.send("/help")
	for st.m.printing {
		st.scrollback = append(st.scrollback, st.m.inFlight...)
		st.m.Update(printedMsg{})
	}
	got := strings.Join(st.scrollback, "\n")
	for _, l := range st.scrollback {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a /help row of %d columns on 80: %q", w, ansi.Strip(l))
		}
	}
	if !strings.Contains(got, "read_only") || !strings.Contains(got, "/mode [mode]") {
		t.Errorf("/help lost the modes:\n%s", got)
	}
}

// Text chunks queued one after another are joined, and the events stay
// in order: another kind, another session or a thought starts anew.
func TestInboxJoinsText(t *testing.T) {
	b := newInbox(func(eventsMsg) {})
	for _, ev := range []acpclient.Event{
		acpclient.Text{SessionID: "s", Text: "a"},
		acpclient.Text{SessionID: "s", Text: "b"},
		acpclient.Text{SessionID: "s", Text: "c"},
		acpclient.Text{SessionID: "s", Text: "hmm", Thought: true},
		acpclient.Text{SessionID: "s", Text: "d"},
		acpclient.ConfigUpdate{SessionID: "s"},
		acpclient.Text{SessionID: "s", Text: "e"},
		acpclient.Text{SessionID: "other", Text: "f"},
	} {
		b.put(ev)
	}
	var got []string
	for _, ev := range b.take() {
		switch e := ev.(type) {
		case acpclient.Text:
			got = append(got, fmt.Sprintf("%s:%s:%v", e.SessionID, e.Text, e.Thought))
		default:
			got = append(got, "config")
		}
	}
	want := []string{"s:abc:false", "s:hmm:true", "s:d:false", "config", "s:e:false", "other:f:false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	// After a take, a chunk is not joined to what was taken.
	b.put(acpclient.Text{SessionID: "other", Text: "g"})
	b.put(acpclient.Text{SessionID: "other", Text: "h"})
	if evs := b.take(); len(evs) != 1 || evs[0].(acpclient.Text).Text != "gh" {
		t.Fatalf("the next batch is %+v, want one text gh", evs)
	}
}

// An approval's title, options and arguments, a plan and an extension's
// command are drawn with their escapes shown, never obeyed.
func TestHostileTextInTheLiveRegion(t *testing.T) {
	st := newScreenTest(t, 100, 30, style.Options{NoColor: true})
	evil := "\x1b]0;PWN\x07"
	title := "bash " + evil
	st.update(acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{{Name: "x" + evil, Description: "d" + evil}}}})
	st.m.in.SetValue("/x")
	st.m.pop.SetInput("/x")
	st.send(eventMsg{acpclient.Permission{Request: acp.RequestPermissionRequest{SessionID: "s1",
		ToolCall: acp.ToolCallUpdate{ToolCallID: "c1", Title: &title, RawInput: json.RawMessage(`{"command":"echo \u001b]0;PWN\u0007","other":"\u009b2J"}`)},
		Options:  []acp.PermissionOption{{OptionID: "allow_once", Name: "Allow " + evil, Kind: acp.PermissionOptionKindAllowOnce}}},
		Answer: func(string) {}}})
	scr := st.m.screen()
	if strings.Contains(scr, "\x1b]0;") || strings.Contains(scr, "\u009b") {
		t.Fatalf("a raw escape reaches the screen: %q", scr)
	}
	for _, want := range []string{`bash \x1b]0;PWN\x07`, `$ echo \x1b]0;PWN\x07`, `Allow \x1b]0;PWN\x07`} {
		if !strings.Contains(scr, want) {
			t.Errorf("the approval does not show %q:\n%s", want, scr)
		}
	}
	st.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	st.update(acp.SessionUpdate{Plan: &acp.Plan{Entries: []acp.PlanEntry{{Content: "step " + evil}}}})
	st.m.pop.SetInput("/x")
	all := strings.Join(st.scrollback, "\n") + st.m.screen()
	if strings.Contains(all, "\x1b]0;") {
		t.Fatalf("a raw escape reaches the screen: %q", all)
	}
	for _, want := range []string{`step \x1b]0;PWN\x07`, `/x\x1b]0;PWN\x07`, `d\x1b]0;PWN\x07`} {
		if !strings.Contains(all, want) {
			t.Errorf("the screen does not show %q:\n%s", want, all)
		}
	}
}

// Ctrl-O shows the last tool call's whole output over the input (the
// scrollback has its first lines), scrolls with the keys, and folds it
// again; an image in a result or an answer is one line with its type
// and size.
func TestCtrlOExpandsTheLastToolOutput(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	var out []string
	for i := 1; i <= 30; i++ {
		out = append(out, fmt.Sprintf("output line %02d", i))
	}
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "c1", Title: "bash: seq 30", Kind: acp.ToolKindExecute, Status: acp.ToolCallStatusPending}})
	st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "c1", Status: acp.ToolCallStatusCompleted, Content: []acp.ToolCallContent{
		{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: strings.Join(out, "\n")}}}},
		{Content: &acp.Content{Content: acp.ContentBlock{Image: &acp.ImageContent{MimeType: "image/png", Data: png}}}},
	}}})
	st.update(acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Image: &acp.ImageContent{MimeType: "image/jpeg", Data: strings.Repeat("A", 4096)}}}})
	st.text("done\n")
	st.m.endSegments()
	st.send(printedMsg{})
	sb := strings.Join(st.scrollback, "\n")
	for _, want := range []string{"output line 09", "… 21 more lines (ctrl+o)", "[image image/png, 70 B]", "[image image/jpeg, 3 KB]"} {
		if !strings.Contains(ansi.Strip(sb), want) {
			t.Errorf("the scrollback lacks %q:\n%s", want, sb)
		}
	}
	if strings.Contains(sb, "output line 10") {
		t.Errorf("the scrollback has more than the first lines:\n%s", sb)
	}
	st.send(tuitest.Key("ctrl+o"))
	st.golden("expanded-end")
	st.send(tuitest.Key("home"))
	if scr := st.screen(); !strings.Contains(scr, "lines 1-12 of 31") || !strings.Contains(scr, "output line 01") {
		t.Fatalf("home does not show the first lines:\n%s", scr)
	}
	st.send(tuitest.Key("pgdown"))
	if scr := st.screen(); !strings.Contains(scr, "lines 13-24 of 31") {
		t.Fatalf("pgdown does not show the next page:\n%s", scr)
	}
	st.send(tuitest.Key("x")) // other keys go to the input
	if st.m.in.Text() != "x" {
		t.Fatalf("the input has %q, want x", st.m.in.Text())
	}
	st.send(tuitest.Key("ctrl+o"))
	if scr := st.screen(); strings.Contains(scr, "collapses") {
		t.Fatalf("ctrl+o again does not fold it:\n%s", scr)
	}
}

// fakeSessions is a SessionSettings in memory.
type fakeSessions struct {
	kept map[string][2]string
	n    int // Keep calls
}

func (f *fakeSessions) Recall(id string) (string, string) { k := f.kept[id]; return k[0], k[1] }
func (f *fakeSessions) Keep(id, model, mode string) error {
	f.n++
	f.kept[id] = [2]string{model, mode}
	return nil
}

// A session opened again is put back in the model and mode it had (two
// calls); nothing is recorded while they are under way, and a change
// after is.
func TestSessionModelAndModeRestored(t *testing.T) {
	fs := &fakeSessions{kept: map[string][2]string{"s1": {"gpt-4.1-mini", "accept_edits"}}}
	m := newModel(context.Background(), Options{CWD: "/work", Theme: style.Options{NoColor: true}, Width: 80, Height: 24, Sessions: fs})
	modes := &acp.SessionModeState{CurrentModeID: "ask", AvailableModes: []acp.SessionMode{{ID: "ask"}, {ID: "accept_edits"}}}
	opts := func(cur string) []acpclient.ConfigOption {
		return []acpclient.ConfigOption{{ID: "model", CurrentValue: cur, Options: []acpclient.ConfigChoice{{Value: "gpt-4.1"}, {Value: "gpt-4.1-mini"}}}}
	}
	m.Update(readyMsg{s: acpclient.Session{ID: "s1", Modes: modes, Options: opts("gpt-4.1")}})
	if m.restoring != 2 {
		t.Fatalf("%d calls to put the session back, want 2 (model and mode)", m.restoring)
	}
	m.Update(restoredMsg{opts: opts("gpt-4.1-mini")})
	m.Update(eventMsg{acpclient.Update{SessionID: "s1", Update: acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: "accept_edits"}}}})
	m.Update(restoredMsg{})
	if fs.n != 0 {
		t.Fatalf("%d records while putting the session back, want none: %v", fs.n, fs.kept)
	}
	if got := m.footer()[0]; !strings.Contains(got, "gpt-4.1-mini · mode accept_edits") {
		t.Fatalf("footer %q", got)
	}
	m.Update(eventMsg{acpclient.Update{SessionID: "s1", Update: acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: "ask"}}}})
	if fs.kept["s1"] != [2]string{"gpt-4.1-mini", "ask"} || fs.n != 1 {
		t.Fatalf("after a change: %d records, kept %v", fs.n, fs.kept["s1"])
	}
}
