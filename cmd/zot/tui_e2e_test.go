//go:build tuie2e

// The terminal client end to end: the real binary in a tmux pane of a
// fixed size, driven with send-keys and read with capture-pane, on the
// scripted provider with a temporary zot home. `make test-tui` runs these
// (the tuie2e build tag keeps them out of `make test`); they need tmux,
// which the Makefile installs from Debian's packages when it is missing.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pane is one tmux server with one session whose pane runs zot.
type pane struct {
	t    testing.TB
	sock string
	tmux string
	dir  string // the working directory zot runs in
	home string // ZOT_HOME
	env  []string
	// poll is the wait between two looks at the screen (20 ms; the
	// benchmarks look again at once).
	poll time.Duration
	// guard bounds every wait (hangGuard unless set).
	guard time.Duration
}

var paneSeq atomic.Int64

// termOpts say how to start zot in the pane.
type termOpts struct {
	w, h int
	dir  string   // working directory; a temp dir when empty
	home string   // ZOT_HOME; a temp dir when empty
	env  []string // more environment entries
	// argv0 runs this program in place of zot (a baseline in benchmarks).
	argv0 string
}

// openTerm starts `zot args…` in a detached tmux session of o.w×o.h cells.
// The pane stays after zot exits (so its exit status and last screen can
// be read); the tmux server is killed at cleanup.
func openTerm(t testing.TB, o termOpts, args ...string) *pane {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("ZOT_E2E_REQUIRED") != "" {
			t.Fatal("tmux is not installed (make test-tui installs it)")
		}
		t.Skip("tmux is not installed; make test-tui installs it")
	}
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	if o.home == "" {
		o.home = t.TempDir()
	}
	tm := &pane{t: t, tmux: tmux, dir: o.dir, home: o.home, poll: 20 * time.Millisecond, guard: hangGuard,
		sock: fmt.Sprintf("zot-e2e-%d-%d", os.Getpid(), paneSeq.Add(1))}
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	os.WriteFile(conf, []byte(strings.Join([]string{
		"set -g remain-on-exit on",
		"set -g history-limit 100000",
		"set -g status off",
		"set -g escape-time 10",
		"set -g default-terminal tmux-256color",
		"",
	}, "\n")), 0o644)
	var env []string
	for _, kv := range cleanEnv() {
		if k, _, _ := strings.Cut(kv, "="); k == "TMUX" || k == "TMUX_PANE" || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "ZOT_HOME="+o.home, "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	tm.env = append(env, o.env...)
	argv0 := zotBin
	if o.argv0 != "" {
		argv0 = o.argv0
	}
	// The shell tells zot's exit status when zot is gone: tmux's own
	// record of it is not always there (3.3 loses it when the terminal
	// closes before the process is reaped).
	cmdline := shellQuote(append([]string{argv0}, args...)) + `; echo "[zot exited $?]"`
	tm.run("-f", conf, "new-session", "-d", "-s", "main", "-x", strconv.Itoa(o.w), "-y", strconv.Itoa(o.h),
		"-c", o.dir, cmdline)
	socket := strings.TrimSpace(tm.run("display", "-p", "#{socket_path}"))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen:\n%s", tm.scrollback())
		}
		exec.Command(tm.tmux, "-L", tm.sock, "kill-server").Run()
		os.Remove(socket)
	})
	return tm
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// run runs a tmux command against this server and returns its output.
func (tm *pane) run(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command(tm.tmux, append([]string{"-L", tm.sock}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys presses tmux's named keys: "Enter", "Escape", "C-c", "M-Enter", "Up".
func (tm *pane) keys(names ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", "main"}, names...)...)
}

// typeText types s literally.
func (tm *pane) typeText(s string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "main", "-l", s)
}

// paste pastes s as the terminal does (bracketed).
func (tm *pane) paste(s string) {
	tm.t.Helper()
	f := filepath.Join(tm.t.TempDir(), "paste")
	os.WriteFile(f, []byte(s), 0o644)
	tm.run("load-buffer", "-b", "p", f)
	tm.run("paste-buffer", "-p", "-d", "-b", "p", "-t", "main")
}

// screen is what the pane shows now.
func (tm *pane) screen() string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-t", "main")
}

// scrollback is the pane's history and screen, every line of it.
func (tm *pane) scrollback() string {
	cmd := exec.Command(tm.tmux, "-L", tm.sock, "capture-pane", "-p", "-S", "-", "-E", "-", "-t", "main")
	out, _ := cmd.Output()
	return string(out)
}

// resize makes the window w×h cells.
func (tm *pane) resize(w, h int) {
	tm.t.Helper()
	tm.run("resize-window", "-t", "main", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
}

// waitFor waits until the screen holds want (or, with the prefix "!",
// no longer holds it) and returns the screen; it fails the test after
// hangGuard with the screen it last saw.
func (tm *pane) waitFor(want string) string {
	tm.t.Helper()
	return tm.waitUntil(want, func(s string) bool {
		if w, ok := strings.CutPrefix(want, "!"); ok {
			return !strings.Contains(s, w)
		}
		return strings.Contains(s, want)
	})
}

// waitUntil waits until ok(screen) and returns the screen.
func (tm *pane) waitUntil(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(tm.guard)
	var s string
	for {
		s = tm.screen()
		if ok(s) {
			return s
		}
		if tm.dead() || time.Now().After(deadline) {
			if ok(tm.screen()) {
				return tm.screen()
			}
			tm.t.Fatalf("waiting for %q (zot exited: %v); the screen:\n%s", what, tm.dead(), s)
		}
		time.Sleep(tm.poll)
	}
}

// choose presses the number the dialog on screen gives the option
// labelled label ("→ 1 Allow once", "  3 Reject once").
func (tm *pane) choose(screen, label string) {
	tm.t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		i := strings.Index(l, " "+label)
		if i < 1 {
			continue
		}
		if c := l[i-1]; c >= '1' && c <= '9' {
			tm.keys(string(c))
			return
		}
	}
	tm.t.Fatalf("no numbered option %q in the dialog:\n%s", label, screen)
}

// exitMark is what the shell prints after zot: "[zot exited N]".
const exitMark = "[zot exited "

// dead says whether zot has exited.
func (tm *pane) dead() bool {
	out, err := exec.Command(tm.tmux, "-L", tm.sock, "capture-pane", "-p", "-t", "main").Output()
	return err == nil && strings.Contains(string(out), exitMark)
}

// exitCode waits for zot to exit and returns its status (128+N for a
// signal, as the shell tells it).
func (tm *pane) exitCode() int {
	tm.t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		scr := tm.screen()
		if _, rest, ok := strings.Cut(scr, exitMark); ok {
			st, _, _ := strings.Cut(rest, "]")
			n, err := strconv.Atoi(st)
			if err != nil {
				tm.t.Fatalf("exit status %q: %v", st, err)
			}
			return n
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("zot did not exit; the screen:\n%s", scr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pid is zot's process id.
func (tm *pane) pid() int {
	tm.t.Helper()
	n, _ := strconv.Atoi(strings.TrimSpace(tm.run("display", "-p", "-t", "main", "#{pane_pid}")))
	return n
}

// answerScript is a script of fixed answers, one turn per answer.
func answerScript(t testing.TB, answers ...string) string {
	var turns []any
	for _, a := range answers {
		turns = append(turns, map[string]any{"steps": []any{map[string]any{"text": a}}})
	}
	return scriptFile(t, map[string]any{"turns": turns})
}

// scriptFile writes a scripted-provider script and returns its path.
func scriptFile(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTUISmoke starts zot in a terminal, sends a prompt, sees the streamed
// answer, and leaves with ctrl+d.
func TestTUISmoke(t *testing.T) {
	s := answerScript(t, "The answer is forty-two.")
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.typeText("what is the answer")
	tm.keys("Enter")
	tm.waitFor("The answer is forty-two.")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d after ctrl+d, want 0", code)
	}
}

// step is one scripted model call.
type step = map[string]any

// turnsScript is a script of turns, each a list of steps.
func turnsScript(t testing.TB, turns ...[]step) string {
	var ts []any
	for _, steps := range turns {
		ts = append(ts, map[string]any{"steps": steps})
	}
	return scriptFile(t, map[string]any{"turns": ts})
}

// toolCall is a step that calls one tool with args.
func toolCall(name string, args any) step {
	return step{"tool_calls": []any{map[string]any{"name": name, "args": args}}}
}

// prompt types text and presses enter.
func (tm *pane) prompt(text string) {
	tm.t.Helper()
	tm.typeText(text)
	tm.keys("Enter")
}

// TestTUIApproveBash: the default mode asks before a bash call; allowing
// it once runs it and its output shows.
func TestTUIApproveBash(t *testing.T) {
	s := turnsScript(t, []step{
		toolCall("bash", map[string]any{"command": "echo approved-$((40+2))"}),
		{"text": "The command printed its line."},
	})
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.prompt("run it")
	tm.choose(tm.waitFor("Allow once"), "Allow once")
	tm.waitFor("approved-42")
	tm.waitFor("The command printed its line.")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestTUIRejectEdit: rejecting an edit leaves the file as it was, and the
// model is told.
func TestTUIRejectEdit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("keep this line\n"), 0o644)
	s := turnsScript(t, []step{
		toolCall("edit", map[string]any{"path": "notes.txt", "edits": []any{map[string]any{"old_text": "keep this line", "new_text": "replaced line"}}}),
		{"text": "Understood, I left notes.txt alone."},
	})
	tm := openTerm(t, termOpts{w: 80, h: 24, dir: dir}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.prompt("change the notes")
	// The approval shows the edit as a diff.
	scr := tm.waitFor("Reject once")
	if !strings.Contains(scr, "replaced line") {
		t.Errorf("the approval does not show the edit's new text:\n%s", scr)
	}
	tm.choose(scr, "Reject once")
	tm.waitFor("Understood, I left notes.txt alone.")
	if data, _ := os.ReadFile(file); string(data) != "keep this line\n" {
		t.Fatalf("notes.txt after a rejected edit: %q", data)
	}
}

// TestTUICtrlCAbortsThenExits: ctrl+c stops a long answer, the input is
// usable again, and ctrl+c on an idle input exits 0.
func TestTUICtrlCAbortsThenExits(t *testing.T) {
	s := turnsScript(t,
		[]step{{"text": "slowly " + strings.Repeat("word ", 2000) + "END-OF-ANSWER", "chunk": 5, "delay_ms": 20}},
		[]step{{"text": "second answer arrives"}},
	)
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.prompt("talk for a long time")
	tm.waitScrollback("slowly")
	tm.keys("C-c")
	tm.waitUntil("the turn to end", func(s string) bool { return !strings.Contains(s, "esc to interrupt") })
	afterAbort := tm.scrollback()
	if strings.Contains(afterAbort, "END-OF-ANSWER") {
		t.Fatal("the whole answer arrived despite ctrl+c")
	}
	tm.prompt("and now?")
	tm.waitFor("second answer arrives")
	time.Sleep(1100 * time.Millisecond) // not a double press
	tm.keys("C-c")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d after ctrl+c on an idle input", code)
	}
	if !strings.Contains(afterAbort, "slowly") || !strings.Contains(afterAbort, "Interrupted.") {
		t.Fatalf("the part of the answer that arrived before ctrl+c, or the Interrupted. under it, is gone from the screen:\n%s", afterAbort)
	}
}

// TestTUIPasteFolded: a large paste shows folded in the input and goes to
// the model whole.
func TestTUIPasteFolded(t *testing.T) {
	s := turnsScript(t, []step{{"echo": true}})
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	var lines []string
	for i := 1; i <= 120; i++ {
		lines = append(lines, fmt.Sprintf("pasted line %03d", i))
	}
	tm.typeText("summarise ")
	tm.paste(strings.Join(lines, "\n"))
	scr := tm.waitFor("[pasted 120 lines #1]")
	if strings.Contains(scr, "pasted line 050") {
		t.Fatalf("the paste is not folded in the input:\n%s", scr)
	}
	tm.keys("Enter")
	// The session file has the prompt the model got: the whole paste.
	want := "summarise " + strings.Join(lines, "\n")
	deadline := time.Now().Add(hangGuard)
	for !slices.Contains(userPrompts(t, tm.home), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt with the whole paste in the session; prompts: %q", userPrompts(t, tm.home))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// userPrompts are the texts of the user messages in the sessions under
// the zot home.
func userPrompts(t *testing.T, home string) []string {
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
	var out []string
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			var m struct {
				Role    string `json:"role"`
				Content []struct {
					Type, Text string
				} `json:"content"`
			}
			if json.Unmarshal([]byte(line), &m) != nil || m.Role != "user" {
				continue
			}
			var b strings.Builder
			for _, c := range m.Content {
				if c.Type == "text" {
					b.WriteString(c.Text)
				}
			}
			out = append(out, b.String())
		}
	}
	return out
}

// TestTUIContinueShowsHistory: `zot -c` in the same folder loads the last
// session, and the conversation so far is on the screen.
func TestTUIContinueShowsHistory(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	s := answerScript(t, "First answer, kept in the session.", "Second answer after resuming.")
	tm := openTerm(t, termOpts{w: 80, h: 24, dir: dir, home: home}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.prompt("remember the word pelican")
	tm.waitFor("First answer, kept in the session.")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	again := openTerm(t, termOpts{w: 80, h: 24, dir: dir, home: home}, "-c", "--provider", "scripted", "--script", s)
	scr := again.waitFor("First answer, kept in the session.")
	if !strings.Contains(again.scrollback(), "remember the word pelican") {
		t.Fatalf("the resumed session does not show the first prompt:\n%s", again.scrollback())
	}
	// The history is on the screen, not scrolled off above empty rows.
	if !strings.Contains(scr, "remember the word pelican") {
		t.Fatalf("the history's first prompt is off the screen:\n%s", scr)
	}
	again.prompt("and now?")
	again.waitFor("Second answer after resuming.")
	again.keys("C-d")
	if code := again.exitCode(); code != 0 {
		t.Fatalf("exit status %d after -c", code)
	}
}

// TestTUIAttach: `zot attach` joins a running daemon and chats through it.
func TestTUIAttach(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "s.sock")
	s := answerScript(t, "Answered by the daemon.", "Second answer from the daemon.")
	d := startZotDaemon(t, doorEnv(home, "ZOT_SOCKET="+sock), "--script", s)
	d.waitFor(t, "listening on")
	tm := openTerm(t, termOpts{w: 80, h: 24, home: home, env: []string{"ZOT_SOCKET=" + sock}}, "attach", sock)
	tm.waitFor("scripted")
	tm.prompt("hello daemon")
	tm.waitFor("Answered by the daemon.")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	if !d.running() {
		t.Fatal("leaving the client stopped the daemon")
	}

	// Attaching again lists the daemon's session; choosing it shows its
	// history.
	again := openTerm(t, termOpts{w: 80, h: 24, home: home, env: []string{"ZOT_SOCKET=" + sock}}, "attach", sock)
	again.waitFor("hello daemon")
	again.typeText("hello")
	again.keys("Enter")
	again.waitScrollback("Answered by the daemon.")
	again.prompt("still there?")
	again.waitFor("Second answer from the daemon.")
	again.keys("C-d")
	if code := again.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestTUIAttachKeepsModelAndMode: the model and mode chosen in a daemon's
// session are there again when zot attach opens it again (the daemon
// loads it in its own), shown and used: the next prompt reaches the
// provider with that model.
func TestTUIAttachKeepsModelAndMode(t *testing.T) {
	models := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		select {
		case models <- body.Model:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"test server: no answers here","type":"invalid_request_error","param":null,"code":null}}`)
	}))
	t.Cleanup(srv.Close)
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "s.sock")
	key := "OPENAI_API_KEY=sk-test-not-a-key"
	cmd := exec.Command(zotBin, "daemon", "--provider", "openai", "--model", "gpt-4.1", "--base-url", srv.URL+"/v1")
	cmd.Env = doorEnv(home, "ZOT_SOCKET="+sock, key)
	d := startDaemonCmd(t, cmd)
	d.waitFor(t, "listening on")
	env := []string{"ZOT_SOCKET=" + sock, key}
	tm := openTerm(t, termOpts{w: 100, h: 24, home: home, env: env}, "attach", sock)
	tm.waitFor("gpt-4.1 · mode ask")
	tm.prompt("/model gpt-4.1-mini")
	tm.waitFor("gpt-4.1-mini · mode ask")
	tm.keys("BTab")
	tm.waitFor("gpt-4.1-mini · mode accept_edits")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	again := openTerm(t, termOpts{w: 100, h: 24, home: home, env: env}, "attach", sock)
	again.waitFor("(untitled)")
	again.keys("Down", "Enter")
	again.waitFor("gpt-4.1-mini · mode accept_edits")
	again.prompt("which model are you")
	select {
	case m := <-models:
		if m != "gpt-4.1-mini" {
			t.Fatalf("the prompt went out with model %q, want gpt-4.1-mini", m)
		}
	case <-time.After(hangGuard):
		t.Fatalf("no request reached the provider; the screen:\n%s", again.screen())
	}
	again.waitFor("no answers here")
}

// waitScrollback waits until the scrollback holds want.
func (tm *pane) waitScrollback(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(tm.guard)
	for !strings.Contains(tm.scrollback(), want) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the scrollback never held %q:\n%s", want, tm.scrollback())
		}
		time.Sleep(tm.poll)
	}
}

// paragraph is a long answer of numbered words, wrapped by the client.
func paragraph(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "w%03d ", i)
	}
	return b.String() + "THE-END"
}

// TestTUISizes: at 80×24 and 200×50 the answer fills the width it has and
// the input and footer are on screen.
func TestTUISizes(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			s := answerScript(t, paragraph(120))
			tm := openTerm(t, termOpts{w: size[0], h: size[1]}, "--provider", "scripted", "--script", s)
			tm.waitFor("scripted")
			tm.prompt("a long paragraph please")
			tm.waitFor("THE-END")
			scr := tm.waitFor("!esc to interrupt")
			longest := 0
			for _, l := range strings.Split(tm.scrollback(), "\n") {
				if strings.Contains(l, "w0") {
					longest = max(longest, len(strings.TrimRight(l, " ")))
				}
			}
			if longest > size[0] || longest < size[0]*3/4 {
				t.Errorf("the answer's longest line is %d cells in a %d-cell terminal", longest, size[0])
			}
			if !strings.Contains(scr, "scripted") {
				t.Errorf("no footer on the screen:\n%s", scr)
			}
		})
	}
}

// TestTUIResizeMidAnswer: the terminal shrinks and grows while an answer
// streams; the answer ends whole and the live region is drawn once.
func TestTUIResizeMidAnswer(t *testing.T) {
	s := turnsScript(t, []step{{"text": paragraph(300), "chunk": 8, "delay_ms": 3}})
	tm := openTerm(t, termOpts{w: 100, h: 30}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.prompt("stream while I resize")
	tm.waitScrollback("w010")
	tm.resize(60, 20)
	tm.waitScrollback("w100")
	tm.resize(140, 40)
	tm.waitFor("THE-END")
	scr := tm.waitFor("!esc to interrupt")
	if n := strings.Count(scr, "mode ask"); n != 1 {
		t.Errorf("the footer shows %d times on the screen, want once:\n%s", n, scr)
	}
	all := strings.Join(strings.Fields(tm.scrollback()), " ")
	for _, w := range []string{"w000", "w150", "w299 THE-END"} {
		if !strings.Contains(all, w) {
			t.Errorf("the answer lost %q across the resizes", w)
		}
	}
}

// TestTUILongAnswerInScrollback: a 10,000-line answer lands in the
// terminal's scrollback whole and in order.
func TestTUILongAnswerInScrollback(t *testing.T) {
	var b strings.Builder
	b.WriteString("```\n")
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&b, "line %05d\n", i)
	}
	b.WriteString("```\nDONE-LONG")
	s := turnsScript(t, []step{{"text": b.String(), "chunk": 4096}})
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.prompt("count to ten thousand")
	tm.waitFor("DONE-LONG")
	tm.waitFor("!esc to interrupt") // the turn has ended: all of it is written
	next := 1
	for _, l := range strings.Split(tm.scrollback(), "\n") {
		if i := strings.Index(l, "line "); i >= 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(l[i+5:])); err == nil && n == next {
				next++
			}
		}
	}
	if next != 10001 {
		t.Fatalf("scrollback has lines 1..%d in order, want all 10000", next-1)
	}
}

// TestTUINoColor: with NO_COLOR the screen carries no colours; without
// it, the same screen (an approval of a bash call) has some, so the check
// sees colour where there is.
func TestTUINoColor(t *testing.T) {
	for _, noColor := range []bool{true, false} {
		t.Run(fmt.Sprintf("NO_COLOR=%v", noColor), func(t *testing.T) {
			s := turnsScript(t, []step{
				{"text": "Plain **text** and `code`.", "tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "echo hi"}}}},
			})
			var env []string
			if noColor {
				env = append(env, "NO_COLOR=1")
			}
			tm := openTerm(t, termOpts{w: 80, h: 24, env: env}, "--provider", "scripted", "--script", s)
			tm.waitFor("scripted")
			tm.prompt("no colours please")
			tm.waitFor("Allow once")
			esc := tm.run("capture-pane", "-p", "-e", "-t", "main")
			c := colourIn(esc)
			if noColor && c != "" {
				t.Fatalf("a colour (SGR %s) on the screen with NO_COLOR:\n%q", c, esc)
			}
			if !noColor && c == "" {
				t.Fatalf("no colour on the screen without NO_COLOR:\n%q", esc)
			}
		})
	}
}

// colourIn returns the first SGR parameter in s that sets a colour
// (30–38, 40–48, 90–97, 100–107; 39 and 49, the defaults, are none), or "".
func colourIn(s string) string {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return ""
		}
		s = s[i+2:]
		j := strings.IndexFunc(s, func(r rune) bool { return r >= 0x40 && r <= 0x7e })
		if j < 0 {
			return ""
		}
		if s[j] == 'm' {
			for _, p := range strings.Split(s[:j], ";") {
				n, err := strconv.Atoi(p)
				if err == nil && (n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107) {
					return p
				}
			}
		}
		s = s[j+1:]
	}
}

// TestTUISlashPopupRunsCommand: "/" opens the popup of commands, typing
// filters it, tab completes the name and enter runs it.
func TestTUISlashPopupRunsCommand(t *testing.T) {
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted")
	tm.waitFor("scripted")
	tm.typeText("/")
	scr := tm.waitFor("/model")
	for _, c := range []string{"/help", "/compact", "/clear"} {
		if !strings.Contains(scr, c) {
			t.Errorf("the popup lacks %s:\n%s", c, scr)
		}
	}
	tm.typeText("hel")
	tm.waitFor("!/compact")
	tm.keys("Tab")
	tm.waitUntil("the input to hold /help", func(s string) bool {
		return strings.Contains(s, "/help ") || strings.HasSuffix(strings.TrimSpace(lastInputLine(s)), "/help")
	})
	tm.keys("Enter")
	scr = tm.waitFor("ctrl+d")
	if !strings.Contains(scr, "/model") || !strings.Contains(scr, "esc") {
		t.Fatalf("/help did not list keys and commands:\n%s", scr)
	}
}

// lastInputLine is the screen's last line that starts with the prompt.
func lastInputLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "›") || strings.HasPrefix(lines[i], ">") {
			return lines[i]
		}
	}
	return ""
}

// TestTUISwitchModel: /model opens a picker of the provider's models;
// choosing one shows it in the footer, and the next prompt goes to the
// provider with it. The provider is a loopback server that answers every
// request with OpenAI's documented error shape (API reference, "Errors":
// {"error":{"message","type","param","code"}}), after noting its model.
func TestTUISwitchModel(t *testing.T) {
	models := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		select {
		case models <- body.Model:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"test server: no answers here","type":"invalid_request_error","param":null,"code":null}}`)
	}))
	t.Cleanup(srv.Close)
	tm := openTerm(t, termOpts{w: 100, h: 30, env: []string{"OPENAI_API_KEY=sk-test-not-a-key"}},
		"--provider", "openai", "--model", "gpt-4.1", "--base-url", srv.URL+"/v1")
	tm.waitFor("gpt-4.1")
	tm.prompt("/model")
	tm.waitFor("gpt-5-nano")
	tm.typeText("gpt-5-nan")
	tm.waitFor("!gpt-4.1-mini")
	tm.keys("Enter")
	tm.waitUntil("the footer to name gpt-5-nano", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for _, l := range lines[max(len(lines)-3, 0):] {
			if strings.Contains(l, "gpt-5-nano") {
				return true
			}
		}
		return false
	})
	tm.prompt("which model are you")
	select {
	case m := <-models:
		if m != "gpt-5-nano" {
			t.Fatalf("the prompt went out with model %q, want gpt-5-nano", m)
		}
	case <-time.After(hangGuard):
		t.Fatalf("no request reached the provider; the screen:\n%s", tm.screen())
	}
	tm.waitFor("no answers here")
}

// installTodo builds the todo example extension and installs it into home.
func installTodo(t *testing.T, home string) {
	t.Helper()
	src := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(src, "todo"), "../../examples/extensions/todo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the todo extension: %v\n%s", err, out)
	}
	data, err := os.ReadFile("../../examples/extensions/todo/extension.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "extension.json"), data, 0o644)
	if out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, t.TempDir(), "ext", "install", src); code != 0 {
		t.Fatalf("zot ext install: %d\n%s%s", code, out, errOut)
	}
}

// TestTUIExtensionPanel: the todo example's panel opens over the input,
// takes the keys (down moves, x marks done), redraws, and esc closes it.
func TestTUIExtensionPanel(t *testing.T) {
	home := t.TempDir()
	installTodo(t, home)
	tm := openTerm(t, termOpts{w: 80, h: 24, home: home}, "--provider", "scripted")
	tm.waitFor("scripted")
	// On an empty list x fails: the extension's notify (warn) is a toast.
	tm.prompt("/todo")
	tm.waitFor("(nothing to do)")
	tm.typeText("x")
	if scr := tm.waitFor("no todo number 1"); !strings.Contains(scr, "! [todo]") {
		t.Errorf("the extension's warning is not a warn toast:\n%s", scr)
	}
	tm.keys("Escape")
	tm.waitFor("!(nothing to do)")
	tm.prompt("/todo add buy milk")
	tm.waitFor("added: buy milk")
	tm.prompt("/todo add ship the panel")
	tm.waitFor("added: ship the panel")
	tm.prompt("/todo")
	scr := tm.waitFor("Todos (2)")
	if !strings.Contains(scr, "▸ □ buy milk") {
		t.Fatalf("the panel does not show the cursor on the first todo:\n%s", scr)
	}
	tm.keys("Down")
	tm.waitFor("▸ □ ship the panel")
	tm.typeText("x")
	tm.waitFor("▸ ✓ ship the panel")
	tm.keys("Escape")
	tm.waitFor("!Todos (2)")
	// The input has the keys again.
	tm.prompt("/todo")
	scr = tm.waitFor("Todos (2)")
	if !strings.Contains(scr, "✓ ship the panel") {
		t.Fatalf("the reopened panel lost the done mark:\n%s", scr)
	}
	tm.keys("Escape")
	tm.waitFor("!Todos (2)")
}

// zotPID is the pid of zot in the pane (the pane's process, or its child
// when a shell runs it).
func (tm *pane) zotPID() int {
	pid := tm.pid()
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.HasPrefix(string(comm), "zot") || strings.Contains(string(comm), "zot") {
		return pid
	}
	kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if f := strings.Fields(string(kids)); len(f) > 0 {
		n, _ := strconv.Atoi(f[0])
		return n
	}
	return pid
}

// rssKB is a process's resident set in KiB (Linux).
func rssKB(pid int) int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// BenchmarkTUIKeystroke is keystroke to screen through the real binary:
// a key sent to the pane until capture-pane shows it. tmux's own round
// trips (a send-keys, a capture-pane or more) are in that time; the same
// loop against cat, whose echo the terminal itself draws, measures them,
// and ms-over-cat is zot's part.
func BenchmarkTUIKeystroke(b *testing.B) {
	loop := func(tm *pane, n int, prompt string) time.Duration {
		t0 := time.Now()
		for i := range n {
			if i%2 == 0 {
				tm.typeText("x")
				tm.waitUntil("x typed", func(s string) bool { return strings.HasSuffix(strings.TrimRight(lastLineWith(s, prompt), " "), "x") })
			} else {
				tm.keys("BSpace")
				tm.waitUntil("x erased", func(s string) bool { return !strings.HasSuffix(strings.TrimRight(lastLineWith(s, prompt), " "), "x") })
			}
		}
		return time.Since(t0)
	}
	base := openTerm(b, termOpts{w: 80, h: 24, argv0: "cat"})
	base.poll = 0
	base.typeText("> ")
	base.waitFor(">")
	tm := openTerm(b, termOpts{w: 80, h: 24}, "--provider", "scripted")
	tm.waitFor("scripted")
	tm.poll = 0
	b.ResetTimer()
	zot := loop(tm, b.N, "›")
	b.StopTimer()
	cat := loop(base, b.N, ">")
	over := (zot - cat) / time.Duration(b.N)
	b.ReportMetric(float64(cat.Microseconds())/float64(b.N)/1000, "ms-cat")
	b.ReportMetric(float64(over.Microseconds())/1000, "ms-over-cat")
}

// lastLineWith is the screen's last line that starts with prefix.
func lastLineWith(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	return ""
}

// BenchmarkTUIStream is an answer of 10,000 chunks rendered through the
// real binary: from enter to its last word on the screen, as chunks per
// second.
func BenchmarkTUIStream(b *testing.B) {
	const chunks = 10000
	text := strings.Repeat("chunk12 ", chunks-1) + "LASTWORD"
	s := turnsScript(b, []step{{"text": text, "chunk": 8}})
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		tm := openTerm(b, termOpts{w: 100, h: 30}, "--provider", "scripted", "--script", s)
		tm.waitFor("scripted")
		tm.guard = 10 * time.Minute
		b.StartTimer()
		t0 := time.Now()
		tm.prompt("stream")
		tm.waitFor("LASTWORD")
		total += time.Since(t0)
	}
	b.ReportMetric(float64(chunks)*float64(b.N)/total.Seconds(), "chunks/s")
}

// BenchmarkTUIMemory1000Turns is zot's resident memory after 10 and after
// 1,000 turns of one session in the terminal.
func BenchmarkTUIMemory1000Turns(b *testing.B) {
	s := turnsScript(b, []step{{"echo": true}})
	for b.Loop() {
		tm := openTerm(b, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
		tm.waitFor("scripted")
		pid := tm.zotPID()
		var at10 int
		for i := 1; i <= 1000; i++ {
			word := fmt.Sprintf("turn%04d", i)
			tm.prompt(word)
			tm.waitFor("You said: " + word)
			if i == 10 {
				at10 = rssKB(pid)
			}
		}
		at1000 := rssKB(pid)
		b.ReportMetric(float64(at10)/1024, "MiB-RSS-at-10")
		b.ReportMetric(float64(at1000)/1024, "MiB-RSS-at-1000")
	}
}

// TestTUIEditorKeys: alt+enter adds a line, enter sends both; up recalls
// the prompt, also in the next run in the same folder; @ completes a
// file of the folder.
func TestTUIEditorKeys(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "internal", "parser"), 0o755)
	os.WriteFile(filepath.Join(dir, "internal", "parser", "lexer.go"), []byte("package parser\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "node_modules", "lexer"), 0o755)
	os.WriteFile(filepath.Join(dir, "node_modules", "lexer", "lexer.js"), []byte("x"), 0o644)
	s := turnsScript(t, []step{{"echo": true}})
	tm := openTerm(t, termOpts{w: 80, h: 24, dir: dir, home: home}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	tm.typeText("first line")
	tm.keys("M-Enter")
	tm.typeText("second line")
	scr := tm.waitFor("second line")
	if strings.Contains(scr, "You said") {
		t.Fatalf("alt+enter sent the prompt:\n%s", scr)
	}
	tm.keys("Enter")
	tm.waitFor("You said: first line")
	if !slices.Contains(userPrompts(t, home), "first line\nsecond line") {
		t.Fatalf("prompts %q, want the two lines as one", userPrompts(t, home))
	}
	tm.keys("Up")
	tm.waitUntil("the prompt recalled", func(s string) bool { return strings.Contains(inputArea(s), "first line") })
	tm.keys("C-u", "C-u") // clear what up recalled (both lines)
	tm.typeText("look at @lexer")
	scr = tm.waitFor("internal/parser/lexer.go")
	if strings.Contains(scr, "node_modules") {
		t.Errorf("@ completion offers node_modules:\n%s", scr)
	}
	tm.keys("Tab")
	tm.waitUntil("the path in the input", func(s string) bool {
		return strings.Contains(lastInputLine(s), "@internal/parser/lexer.go")
	})
	tm.keys("C-d") // not empty: stays
	time.Sleep(300 * time.Millisecond)
	if tm.dead() {
		t.Fatal("ctrl+d on a non-empty input left")
	}
	tm.keys("C-a", "C-k", "C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	// The next run in the folder has the history.
	again := openTerm(t, termOpts{w: 80, h: 24, dir: dir, home: home}, "--provider", "scripted", "--script", s)
	again.waitFor("scripted")
	again.keys("Up")
	again.waitUntil("the last run's prompt recalled", func(s string) bool { return strings.Contains(inputArea(s), "second line") })
}

// inputArea is the screen under its last rule: the input and the footer.
func inputArea(s string) string {
	if i := strings.LastIndex(s, "──"); i >= 0 {
		return s[i:]
	}
	return s
}

// TestTUIDocScreens writes the screens docs/terminal.md shows, captured
// from tmux, to the file $ZOT_TUI_CAPTURE (as Markdown code blocks under
// their names); it is a generator, skipped without that variable.
func TestTUIDocScreens(t *testing.T) {
	out := os.Getenv("ZOT_TUI_CAPTURE")
	if out == "" {
		t.Skip("ZOT_TUI_CAPTURE=file writes the screens of docs/terminal.md")
	}
	var doc strings.Builder
	shot := func(name, screen string) {
		lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
		for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
			lines = lines[1:]
		}
		fmt.Fprintf(&doc, "### %s\n\n```\n%s\n```\n\n", name, strings.Join(lines, "\n"))
	}
	defer func() { os.WriteFile(out, []byte(doc.String()), 0o644) }()
	// settled waits until the screen holds want and the input and footer
	// are drawn under it (a capture between a print and the next frame
	// shows the frame before).
	settled := func(tm *pane, want string) string {
		return tm.waitUntil(want, func(s string) bool {
			return strings.Contains(s, want) && strings.Contains(s, "Ask anything") && !strings.Contains(s, "esc to interrupt")
		})
	}

	// The built-in script: opening, an approval, after it, /, ctrl+o.
	wdir := t.TempDir()
	os.WriteFile(filepath.Join(wdir, "sum.go"), []byte("package sum\n"), 0o644)
	wt := openTerm(t, termOpts{w: 80, h: 24, dir: wdir}, "--provider", "scripted", "why does the test fail?")
	shot("Opening", wt.waitFor("scripted · mode ask"))
	wt.keys("Enter")
	shot("A turn waiting for approval", wt.waitFor("Allow once"))
	wt.keys("y")
	shot("After y", settled(wt, "round trip"))
	wt.keys("C-o")
	shot("Ctrl-O: the last call's output, whole", wt.waitFor("collapses"))
	wt.keys("C-o")
	wt.waitFor("!collapses")
	wt.typeText("/")
	shot("The / popup", wt.waitFor("/compact"))

	// The editor: @ completion and a folded paste.
	dir := t.TempDir()
	for _, f := range []string{"README.md", "go.mod", "cmd/app/main.go", "internal/parser/lexer.go", "internal/parser/parser.go", "internal/parser/parser_test.go"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644)
	}
	tm := openTerm(t, termOpts{w: 80, h: 24, dir: dir}, "--provider", "scripted")
	tm.waitFor("scripted")
	tm.typeText("explain @pars")
	shot("@ completes a path of the working directory (tab or enter takes it)", tm.waitFor("parser_test.go"))
	tm.keys("Escape")
	time.Sleep(100 * time.Millisecond) // an escape and a key at once read as alt+key
	tm.keys("C-u")
	var lines []string
	for i := 1; i <= 120; i++ {
		lines = append(lines, fmt.Sprintf("log line %d", i))
	}
	tm.typeText("why does this fail? ")
	tm.paste(strings.Join(lines, "\n"))
	shot("A large paste is folded in the input and sent whole", tm.waitFor("[pasted 120 lines"))
	tm.keys("C-u")
	tm.typeText("/he")
	shot("The / popup, filtered as you type", tm.waitFor("/help"))
	tm.keys("Enter")
	shot("/help", settled(tm, "ctrl+d"))

	// A panel and a toast from the todo example.
	home := t.TempDir()
	installTodo(t, home)
	pt := openTerm(t, termOpts{w: 80, h: 24, home: home}, "--provider", "scripted")
	pt.waitFor("scripted")
	pt.prompt("/todo add write the release notes")
	pt.waitFor("added:")
	pt.prompt("/todo add tag v1.0")
	pt.waitFor("added: tag")
	pt.prompt("/todo")
	pt.waitFor("Todos (2)")
	pt.keys("Down")
	pt.typeText("x")
	shot("An extension's panel (the todo example) after down and x", pt.waitUntil("the mark", func(s string) bool {
		return strings.Contains(s, "▸ ✓ tag v1.0")
	}))
	pt.keys("Escape")
	pt.waitFor("!Todos (2)")

	// /model, filtered.
	mt := openTerm(t, termOpts{w: 80, h: 24, env: []string{"OPENAI_API_KEY=sk-test-not-a-key"}},
		"--provider", "openai", "--model", "gpt-4.1", "--base-url", "http://127.0.0.1:9/v1")
	mt.waitFor("gpt-4.1")
	mt.prompt("/model")
	mt.waitFor("gpt-5-nano")
	mt.typeText("mini")
	shot("/model: a picker with a filter", mt.waitFor("!gpt-4.1-nano"))

	// Ctrl-C in the middle of an answer.
	s := turnsScript(t, []step{{"text": "Let me walk through the failing test step by step. " + strings.Repeat("The parser reads a token and ", 200), "chunk": 6, "delay_ms": 15}})
	ct := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	ct.waitFor("scripted")
	ct.prompt("walk me through it")
	shot("An answer streaming", ct.waitUntil("three lines", func(s string) bool { return strings.Count(s, "reads a token") >= 9 }))
	ct.keys("C-c")
	shot("Ctrl-C stopped it", ct.waitFor("!esc to interrupt"))

	// ASCII only.
	s = turnsScript(t, []step{toolCall("bash", map[string]any{"command": "go test ./internal/parser/"})})
	at := openTerm(t, termOpts{w: 80, h: 24, env: []string{"ZOT_ASCII=1"}}, "--provider", "scripted", "--script", s)
	at.waitFor("scripted")
	at.prompt("run the parser tests")
	shot("ZOT_ASCII=1: an approval without line drawing", at.waitFor("Allow once"))

	// zot attach: the daemon's sessions.
	ddir := doorDir(t)
	dhome := filepath.Join(ddir, "home")
	sock := filepath.Join(ddir, "s.sock")
	d := startZotDaemon(t, doorEnv(dhome, "ZOT_SOCKET="+sock), "--script", answerScript(t, "Done."))
	d.waitFor(t, "listening on")
	first := openTerm(t, termOpts{w: 80, h: 24, home: dhome}, "attach", sock)
	first.waitFor("scripted")
	first.prompt("fix the flaky parser test")
	first.waitFor("Done.")
	first.keys("C-d")
	first.exitCode()
	again := openTerm(t, termOpts{w: 80, h: 24, home: dhome}, "attach", sock)
	shot("zot attach: the daemon's sessions", again.waitFor("fix the flaky"))
}

// TestTUIRedrawsOnlyTheLiveRegion: while a long answer streams (and the
// window is resized), zot never clears the screen or the scrollback, and
// what it writes stays within a small multiple of the answer: finished
// lines go to the scrollback once, only the live region is redrawn.
func TestTUIRedrawsOnlyTheLiveRegion(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "Paragraph %d says something short.\n\n", i)
	}
	b.WriteString("FINAL-PARAGRAPH")
	answer := b.String()
	s := turnsScript(t, []step{{"text": answer, "chunk": 32, "delay_ms": 8}})
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	raw := filepath.Join(t.TempDir(), "raw")
	tm.run("pipe-pane", "-o", "-t", "main", "cat >> "+shellQuote([]string{raw}))
	tm.prompt("many paragraphs")
	tm.waitScrollback("Paragraph 100 ")
	tm.resize(100, 30)
	tm.waitFor("FINAL-PARAGRAPH")
	tm.waitFor("!esc to interrupt")
	tm.run("pipe-pane", "-t", "main")
	out, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []string{"\x1b[2J", "\x1b[3J", "\x1bc"} {
		if n := strings.Count(string(out), seq); n > 0 {
			t.Errorf("zot wrote %q (a clear of the screen or scrollback) %d times while streaming", seq, n)
		}
	}
	ratio := float64(len(out)) / float64(len(answer))
	t.Logf("wrote %d bytes for an answer of %d (%.1fx)", len(out), len(answer), ratio)
	if ratio > 20 {
		t.Errorf("zot wrote %.1f times the answer's size: more than the live region is being redrawn", ratio)
	}
	next := 1
	for _, l := range strings.Split(tm.scrollback(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), fmt.Sprintf("Paragraph %d ", next)) {
			next++
		}
	}
	if next != 401 {
		t.Fatalf("the scrollback has paragraphs 1..%d in order, want all 400:\n%s", next-1, tm.scrollback())
	}
}

// TestTUIUntrustedFolder: a folder with its own extension asks once
// before the screen opens; no leaves the extension off and is remembered
// (the next start says so instead of asking) until zot untrust. Shift-Tab
// moves to the next permission mode.
func TestTUIUntrustedFolder(t *testing.T) {
	dir := t.TempDir()
	ext := filepath.Join(dir, ".zot", "extensions", "weather")
	os.MkdirAll(ext, 0o755)
	for _, f := range []string{"extension.json", "weather.py"} {
		data, err := os.ReadFile(filepath.Join("../../examples/extensions/weather", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ext, f), data, 0o755)
	}
	tm := openTerm(t, termOpts{w: 80, h: 24, dir: dir}, "--provider", "scripted")
	scr := tm.waitFor("[y/N]")
	if !strings.Contains(scr, "(weather)") {
		t.Errorf("the question does not name the extension:\n%s", scr)
	}
	tm.typeText("n")
	tm.keys("Enter")
	tm.waitFor("mode ask")
	tm.waitFor("Not trusted")
	tm.keys("BTab")
	tm.waitFor("mode accept_edits")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	// Remembered: the next start does not ask, and says the extension
	// is off.
	again := openTerm(t, termOpts{w: 80, h: 24, dir: dir, home: tm.home}, "--provider", "scripted")
	scr = again.waitFor("scripted")
	if strings.Contains(again.scrollback(), "[y/N]") || !strings.Contains(scr, "you declined them") {
		t.Fatalf("the declined folder was asked about again, or not said to be off:\n%s", again.scrollback())
	}
	again.keys("C-d")
	again.exitCode()
	env := []string{"ZOT_HOME=" + tm.home}
	if out, _, _ := runZot(t, "", env, "trust", "--list"); !strings.Contains(out, "declined: not asked again") {
		t.Fatalf("zot trust --list does not show the decline:\n%s", out)
	}
	if out, errOut, code := runZot(t, "", env, "untrust", dir); code != 0 || !strings.Contains(out, "was declined") {
		t.Fatalf("zot untrust: %d %s%s", code, out, errOut)
	}
	// Forgotten: the next start asks again.
	third := openTerm(t, termOpts{w: 80, h: 24, dir: dir, home: tm.home}, "--provider", "scripted")
	third.waitFor("[y/N]")
	// Left before the test ends, so that it writes nothing into the
	// home while the home is removed.
	third.typeText("n")
	third.keys("Enter")
	third.waitFor("Ask anything")
	third.keys("C-d")
	if code := third.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestTUIEscapesInAnswerStayText: a terminal escape in the model's answer
// (setting the window title) or in a tool's output (the same, from
// printf) reaches the terminal as visible text, never raw: the pane's
// title stays as it was and the screen shows the rest of the answer.
func TestTUIEscapesInAnswerStayText(t *testing.T) {
	s := turnsScript(t, []step{
		toolCall("bash", map[string]any{"command": `printf 'out \033]0;TOOLPWN\007 done\n'`}),
		{"text": "before \x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07 after-the-escape"},
	})
	tm := openTerm(t, termOpts{w: 80, h: 24}, "--provider", "scripted", "--script", s, "--permission", "allow")
	tm.waitFor("scripted")
	tm.prompt("go")
	tm.waitFor("after-the-escape")
	if title := tm.run("display", "-p", "#{pane_title}"); strings.Contains(title, "PWN") {
		t.Errorf("an escape reached the terminal: its title is %q", title)
	}
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// hostileExt is an extension whose command's description, notice and
// panel carry terminal escapes: a title set (OSC 0 and 2), a clear, the
// cursor sent home.
const hostileExt = `#!/usr/bin/env python3
import json, sys
def emit(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
emit({"type": "hello", "name": "hostile", "version": "1.0.0", "capabilities": ["commands", "panels"]})
sys.stdin.readline()
emit({"type": "register_command", "name": "hostile", "description": "desc \x1b]0;DESC-PWN\x07 end"})
emit({"type": "ready"})
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "command_invoked":
        emit({"type": "notify", "level": "warn", "message": "toast \x1b]0;TOAST-PWN\x07\x1b[2J after-toast"})
        emit({"type": "command_response", "id": m["id"], "action": "open_panel", "open_panel": {
            "id": "p", "title": "Panel \x1b]2;TITLE-PWN\x07",
            "lines": ["line-one \x1b[H\x1b]0;LINE-PWN\x07 same-row", "\x9b2J second"],
            "footer": "foot \x1b[5A up"}})
    elif m["type"] == "shutdown":
        emit({"type": "shutdown_ack"}); break
`

// TestTUIHostileTextStaysText: escapes in what an extension shows (its
// command's description, a notice, a panel's title, lines and footer)
// and in a diff (an approval's and a call's) are drawn as text: the
// pane's title stays, a line that sends the cursor home stays one row.
func TestTUIHostileTextStaysText(t *testing.T) {
	home := t.TempDir()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "hostile.py"), []byte(hostileExt), 0o755)
	os.WriteFile(filepath.Join(src, "extension.json"), []byte(`{"name":"hostile","version":"1.0.0","exec":"./hostile.py"}`), 0o644)
	if out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, t.TempDir(), "ext", "install", src); code != 0 {
		t.Fatalf("zot ext install: %d\n%s%s", code, out, errOut)
	}
	s := turnsScript(t, []step{
		toolCall("write", map[string]any{"path": "evil.txt", "content": "plain\nwritten \x1b]0;DIFF-PWN\x07 text\n"}),
		{"text": "Wrote it."},
	})
	tm := openTerm(t, termOpts{w: 100, h: 30, home: home}, "--provider", "scripted", "--script", s)
	tm.waitFor("scripted")
	before := tm.run("display", "-p", "#{pane_title}")
	titleKept := func(where string) {
		t.Helper()
		if title := tm.run("display", "-p", "#{pane_title}"); title != before || strings.Contains(title, "PWN") {
			t.Fatalf("%s: an escape reached the terminal: the title went from %q to %q", where, before, title)
		}
	}
	tm.typeText("/hos")
	tm.waitFor(`desc \x1b]0;DESC-PWN\x07 end`)
	titleKept("the / popup")
	tm.keys("C-u")
	tm.prompt("/hostile")
	scr := tm.waitFor(`line-one \x1b[H\x1b]0;LINE-PWN\x07 same-row`)
	for _, want := range []string{`Panel \x1b]2;TITLE-PWN\x07`, `\u009b2J second`, `foot \x1b[5A up`, `toast \x1b]0;TOAST-PWN\x07\x1b[2J after-toast`} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen does not show %q as text:\n%s", want, scr)
		}
	}
	titleKept("the panel and the toast")
	tm.keys("Escape")
	tm.waitFor("!line-one")
	tm.prompt("write the file")
	scr = tm.waitFor("Allow once")
	if !strings.Contains(scr, `written \x1b]0;DIFF-PWN\x07 text`) {
		t.Errorf("the approval's diff does not show the escape as text:\n%s", scr)
	}
	titleKept("the approval's diff")
	tm.keys("y")
	tm.waitFor("Wrote it.")
	if sb := tm.scrollback(); !strings.Contains(sb, "evil.txt +2 -0") || !strings.Contains(sb, `2 + written \x1b]0;DIFF-PWN\x07 text`) {
		t.Errorf("the call's diff does not show the escape as text:\n%s", sb)
	}
	titleKept("the call's diff")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestTUICtrlOExpandsToolOutput: a call's long output is cut in the
// scrollback; Ctrl-O shows it whole over the input, Home goes to its
// start, Ctrl-O folds it again.
func TestTUICtrlOExpandsToolOutput(t *testing.T) {
	s := turnsScript(t, []step{
		toolCall("bash", map[string]any{"command": "seq -f 'row %g' 1 40"}),
		{"text": "Forty rows."},
	})
	tm := openTerm(t, termOpts{w: 80, h: 30}, "--provider", "scripted", "--script", s, "--permission", "allow")
	tm.waitFor("scripted")
	tm.prompt("count")
	tm.waitFor("Forty rows.")
	if sb := tm.scrollback(); !strings.Contains(sb, "more lines (ctrl+o)") || strings.Contains(sb, "row 30") {
		t.Fatalf("the output is not cut in the scrollback:\n%s", sb)
	}
	tm.keys("C-o")
	scr := tm.waitFor("ctrl+o or esc collapses")
	if !strings.Contains(scr, "row 40") || !strings.Contains(scr, "bash: seq") {
		t.Fatalf("ctrl+o does not show the output's end:\n%s", scr)
	}
	tm.keys("Home")
	scr = tm.waitFor("lines 1-")
	if !strings.Contains(scr, "row 1\n") && !strings.Contains(scr, "row 1 ") {
		t.Fatalf("home does not show the first row:\n%s", scr)
	}
	tm.keys("C-o")
	tm.waitFor("!collapses")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
