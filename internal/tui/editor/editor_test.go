package editor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"zot.dev/zot/internal/tui/tuitest"
)

// feed sends msgs to m and returns the SubmitMsgs that came back.
func feed(m *Model, msgs ...tea.Msg) []string {
	var out []string
	for _, msg := range msgs {
		if cmd := m.Update(msg); cmd != nil {
			if s, ok := cmd().(SubmitMsg); ok {
				out = append(out, s.Text)
			}
		}
	}
	return out
}

func keys(names ...string) []tea.Msg {
	var out []tea.Msg
	for _, n := range names {
		out = append(out, tuitest.Key(n))
	}
	return out
}

func TestEnterSubmitsAndClears(t *testing.T) {
	m := New(Options{})
	if got := feed(m, keys("enter")...); got != nil {
		t.Fatalf("enter on an empty input submitted %q", got)
	}
	got := feed(m, append(tuitest.Type("fix the test"), tuitest.Key("enter"))...)
	if !slices.Equal(got, []string{"fix the test"}) {
		t.Fatalf("submitted %q, want [fix the test]", got)
	}
	if !m.Empty() {
		t.Fatalf("input after submit = %q, want empty", m.Text())
	}
}

func TestNewlineKeys(t *testing.T) {
	for _, k := range []string{"shift+enter", "alt+enter", "ctrl+j"} {
		m := New(Options{})
		feed(m, tuitest.Type("one")...)
		feed(m, tuitest.Key(k))
		got := feed(m, append(tuitest.Type("two"), tuitest.Key("enter"))...)
		if !slices.Equal(got, []string{"one\ntwo"}) {
			t.Errorf("%s: submitted %q, want one newline between", k, got)
		}
	}
	// A backslash before enter is a newline, for terminals that send enter
	// for shift+enter; the backslash goes.
	m := New(Options{})
	feed(m, append(tuitest.Type(`one\`), tuitest.Key("enter"))...)
	if m.Text() != "one\n" {
		t.Fatalf(`"\" enter left %q, want "one\n"`, m.Text())
	}
}

func TestEditingKeys(t *testing.T) {
	cases := []struct {
		keys []tea.Msg
		want string
	}{
		{append(tuitest.Type("hello world"), keys("ctrl+w")...), "hello "},
		{append(tuitest.Type("hello world"), keys("alt+backspace", "alt+backspace")...), ""},
		{append(tuitest.Type("hello world"), keys("alt+b", "ctrl+k")...), "hello "},
		{append(tuitest.Type("hello world"), keys("alt+b", "ctrl+u")...), "world"},
		{append(tuitest.Type("abc"), keys("left", "left", "backspace", "delete")...), "c"},
		{append(tuitest.Type("abc"), keys("ctrl+a", "x", "ctrl+e", "y")...), "xabcy"},
		{append(tuitest.Type("ab"), keys("shift+enter", "c", "ctrl+a", "backspace")...), "abc"},
		{append(tuitest.Type("héllo wörld"), keys("home", "alt+f", "alt+f", "alt+b", "ctrl+k")...), "héllo "},
	}
	for i, c := range cases {
		m := New(Options{})
		feed(m, c.keys...)
		if m.Text() != c.want {
			t.Errorf("case %d: %q, want %q", i, m.Text(), c.want)
		}
	}
}

func TestHistoryUpDown(t *testing.T) {
	h, _ := OpenHistory("", 0)
	m := New(Options{History: h})
	feed(m, append(tuitest.Type("one"), tuitest.Key("enter"))...)
	feed(m, append(append(tuitest.Type("two"), tuitest.Key("shift+enter")), append(tuitest.Type("three"), tuitest.Key("enter"))...)...)
	feed(m, tuitest.Type("draft")...)

	feed(m, tuitest.Key("up"))
	if m.Text() != "two\nthree" {
		t.Fatalf("first up shows %q, want the last entry", m.Text())
	}
	if l, _ := m.Cursor(); l != 0 {
		t.Fatalf("after up the cursor is on line %d, want 0 (so up again goes further back)", l)
	}
	feed(m, tuitest.Key("up"))
	if m.Text() != "one" {
		t.Fatalf("second up shows %q, want one", m.Text())
	}
	feed(m, tuitest.Key("up")) // nothing older: stays
	if m.Text() != "one" {
		t.Fatalf("up past the oldest shows %q", m.Text())
	}
	feed(m, tuitest.Key("down"))
	if m.Text() != "two\nthree" {
		t.Fatalf("down shows %q", m.Text())
	}
	// The cursor is on the last line of a recalled entry when coming
	// forward, so one down goes on to the draft.
	feed(m, tuitest.Key("down"))
	if m.Text() != "draft" {
		t.Fatalf("down past the newest shows %q, want the draft back", m.Text())
	}
	// Up inside a multi-line input moves between its lines first.
	m.SetValue("a\nb")
	feed(m, tuitest.Key("up"))
	if m.Text() != "a\nb" {
		t.Fatalf("up on the second line recalled history: %q", m.Text())
	}
}

func TestHistoryPersistsPerFolderBounded(t *testing.T) {
	home := t.TempDir()
	p1 := HistoryPath(home, "/work/one")
	p2 := HistoryPath(home, "/work/two")
	if p1 == p2 || !strings.HasPrefix(p1, filepath.Join(home, "history")) {
		t.Fatalf("history paths %q and %q: want distinct files under the home's history folder", p1, p2)
	}
	h, err := OpenHistory(p1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := h.Add(fmt.Sprintf("prompt %d\nline two", i)); err != nil {
			t.Fatal(err)
		}
	}
	h.Add("prompt 9\nline two") // a repeat of the last is not kept twice
	h2, err := OpenHistory(p1, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range h2.Len() {
		got = append(got, h2.At(i))
	}
	want := []string{"prompt 7\nline two", "prompt 8\nline two", "prompt 9\nline two"}
	if !slices.Equal(got, want) {
		t.Fatalf("reopened history = %q, want %q", got, want)
	}
	data, _ := os.ReadFile(p1)
	if n := strings.Count(string(data), "\n"); n > 6 {
		t.Fatalf("history file has %d lines, want at most twice the limit (6)", n)
	}
	if other, _ := OpenHistory(p2, 3); other.Len() != 0 {
		t.Fatalf("another folder's history has %d entries", other.Len())
	}
	// A torn line is skipped, the rest kept.
	os.WriteFile(p2, []byte("\"ok\"\n{bad\n\"fine\"\n"), 0o600)
	if h3, _ := OpenHistory(p2, 3); h3.Len() != 2 {
		t.Fatalf("history with a bad line has %d entries, want 2", h3.Len())
	}
}

func TestPasteFoldedButSubmittedWhole(t *testing.T) {
	var lines []string
	for i := range 120 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	big := strings.Join(lines, "\n")
	m := New(Options{})
	feed(m, tuitest.Type("see ")...)
	feed(m, tea.PasteMsg{Content: big})
	feed(m, tuitest.Type(" please")...)
	if m.Text() != "see [pasted 120 lines #1] please" {
		t.Fatalf("shown %q, want the paste folded", m.Text())
	}
	got := feed(m, tuitest.Key("enter"))
	if len(got) != 1 || got[0] != "see "+big+" please" {
		t.Fatalf("submitted %d bytes, want the whole paste", len(strings.Join(got, "")))
	}

	// A small paste goes in as it is.
	feed(m, tea.PasteMsg{Content: "a\r\nb"})
	if m.Text() != "a\nb" {
		t.Fatalf("small paste gave %q", m.Text())
	}

	// A folded paste the user edits is sent as typed.
	m.Reset()
	feed(m, tea.PasteMsg{Content: big})
	feed(m, tuitest.Key("backspace"))
	if v := m.Value(); v != "[pasted 120 lines #1" {
		t.Fatalf("edited placeholder gives %q", v)
	}
}

func fixtureDir(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{
		"README.md", "go.mod", "internal/tui/editor/editor.go", "internal/tui/popup/popup.go",
		"node_modules/left-pad/index.js", ".git/config", "build/out.bin", "notes.log", "docs/terminal.md",
	} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# built\nbuild/\n*.log\n"), 0o644)
	return dir
}

func TestListFilesSkipsIgnored(t *testing.T) {
	got := ListFiles(fixtureDir(t))
	for _, p := range got {
		if strings.HasPrefix(p, "node_modules") || strings.HasPrefix(p, ".git/") || strings.HasPrefix(p, "build") || strings.HasSuffix(p, ".log") {
			t.Errorf("listed %s, which is skipped or ignored", p)
		}
	}
	if !slices.Contains(got, "internal/tui/editor/editor.go") || !slices.Contains(got, "docs/") {
		t.Fatalf("listing %q misses files", got)
	}
	if slices.Index(got, "README.md") > slices.Index(got, "internal/tui/editor/editor.go") {
		t.Fatalf("listing not shallow first: %q", got)
	}
}

func TestAtPathCompletion(t *testing.T) {
	m := New(Options{WorkDir: fixtureDir(t), Width: 60})
	feed(m, tuitest.Type("look at @edi")...)
	if !m.Completing() {
		t.Fatal("no completion list after @edi")
	}
	feed(m, tuitest.Key("tab")) // the folder first (shorter), then its file
	if m.Text() != "look at @internal/tui/editor/" {
		t.Fatalf("tab gave %q", m.Text())
	}
	feed(m, tuitest.Key("tab"))
	if m.Text() != "look at @internal/tui/editor/editor.go " {
		t.Fatalf("tab gave %q", m.Text())
	}
	if m.Completing() {
		t.Fatal("list still open after accepting a file")
	}

	// A folder goes on completing inside it; down and enter choose.
	m.Reset()
	feed(m, tuitest.Type("@int")...)
	feed(m, tuitest.Key("enter"))
	if m.Text() != "@internal/" || !m.Completing() {
		t.Fatalf("enter on a folder gave %q (completing %v)", m.Text(), m.Completing())
	}
	feed(m, tuitest.Type("tui/p")...)
	feed(m, tuitest.Key("enter"))
	if m.Text() != "@internal/tui/popup/" {
		t.Fatalf("got %q", m.Text())
	}
	feed(m, tuitest.Key("enter"))
	if m.Text() != "@internal/tui/popup/popup.go " {
		t.Fatalf("got %q", m.Text())
	}

	// Esc closes it for this word; enter then submits.
	m.Reset()
	feed(m, tuitest.Type("@READ")...)
	feed(m, tuitest.Key("esc"))
	if m.Completing() {
		t.Fatal("esc left the list open")
	}
	if got := feed(m, tuitest.Key("enter")); !slices.Equal(got, []string{"@READ"}) {
		t.Fatalf("enter after esc submitted %q", got)
	}

	// An email address is not a path to complete; nor is a word without @.
	m.Reset()
	feed(m, tuitest.Type("me@edi")...)
	if m.Completing() {
		t.Fatal("completion opened inside a word")
	}
}

func TestMatchPathsOrder(t *testing.T) {
	paths := []string{"cmd/zot/main.go", "internal/tui/editor/editor.go", "editor/", "docs/editors.md", "internal/e/d/i/t.go"}
	got := MatchPaths(paths, "edit", 10)
	want := []string{"editor/", "docs/editors.md", "internal/tui/editor/editor.go", "internal/e/d/i/t.go"}
	if !slices.Equal(got, want) {
		t.Fatalf("MatchPaths = %q, want %q", got, want)
	}
	if got := MatchPaths(paths, "edit", 1); len(got) != 1 {
		t.Fatalf("limit not kept: %q", got)
	}
}

func TestScreens(t *testing.T) {
	dir := fixtureDir(t)
	var long []string
	for i := range 30 {
		long = append(long, fmt.Sprintf("row %d", i))
	}
	cases := []struct {
		name string
		opts Options
		msgs []tea.Msg
	}{
		{"empty", Options{Placeholder: "Ask zot, / for commands, @ for files"}, nil},
		{"empty-no-placeholder", Options{}, nil},
		{"typed", Options{}, tuitest.Type("fix the failing test")},
		{"cursor-mid", Options{}, append(tuitest.Type("fix the test"), keys("alt+b", "alt+b")...)},
		{"multiline", Options{}, append(append(tuitest.Type("first"), tuitest.Key("alt+enter")), tuitest.Type("second")...)},
		{"wrapped", Options{Width: 24}, tuitest.Type("a long line that wraps at the edge of the box")},
		{"wrapped-full", Options{Width: 12}, tuitest.Type("0123456789")},
		{"folded-paste", Options{}, []tea.Msg{tea.PasteMsg{Content: strings.Join(long, "\n")}}},
		{"scrolls", Options{MaxHeight: 4}, []tea.Msg{tea.PasteMsg{Content: "1\n2\n3\n4\n5\n6"}}},
		{"completion", Options{WorkDir: dir, Width: 40}, tuitest.Type("read @")},
		{"completion-filtered", Options{WorkDir: dir, Width: 40}, append(tuitest.Type("read @md"), tuitest.Key("down"))},
		{"wide-runes", Options{Width: 16}, tuitest.Type("日本語のテキストです")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.opts.Width == 0 {
				c.opts.Width = 40
			}
			m := New(c.opts)
			feed(m, c.msgs...)
			tuitest.Golden(t, c.name, tuitest.Screen(m.View())+"\n")
		})
	}
}

// BenchmarkKeystroke is one typed key through Update and View on an
// input of a few lines: the editor's share of keystroke-to-screen.
func BenchmarkKeystroke(b *testing.B) {
	m := New(Options{Width: 100})
	m.SetValue(strings.Repeat("some words in a line of text ", 3) + "\nsecond line\nthird")
	k := tuitest.Key("x")
	bs := tuitest.Key("backspace")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			m.Update(k)
		} else {
			m.Update(bs)
		}
		_ = m.View()
	}
}
