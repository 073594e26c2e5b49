package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/tui/style"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got:\n%s--- want:\n%s", path, got, want)
	}
}

const doc = `# Title

Some **bold**, *italic*, _also italic_, a snake_case_name, ` + "`code`" + ` and a [link](https://example.com).
A long paragraph line that goes on and on past the width of the screen so that it has to wrap onto the next line.

> a quote with **bold**

- item one
- [ ] to do
- [x] done
  - nested item that is long enough to wrap past the width of forty cells
1. first
2) second

---

| a | b |
|---|---|
| 1 | 2 |

` + "```go" + `
func main() { // entry
	fmt.Println("hi", 42)
}
` + "```" + `
` + "~~~" + `
plain fence
` + "~~~"

// renderAll renders src a line at a time, as a stream does.
func renderAll(m *Markdown, src string) string {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		for _, out := range m.Line(l) {
			b.WriteString(strings.TrimRight(ansi.Strip(out), " ") + "\n")
		}
	}
	return b.String()
}

// The Markdown a model writes, rendered at 40 cells with Unicode and in
// ASCII.
func TestMarkdown(t *testing.T) {
	for name, o := range map[string]style.Options{"unicode": {NoColor: true}, "ascii": {NoColor: true, ASCII: true}} {
		t.Run(name, func(t *testing.T) {
			golden(t, "markdown-"+name, renderAll(NewMarkdown(style.New(o), 40), doc))
		})
	}
}

// Every rendered line fits the width, at any width.
func TestMarkdownFitsWidth(t *testing.T) {
	th := style.New(style.Options{})
	for _, w := range []int{10, 20, 33, 80, 200} {
		m := NewMarkdown(th, w)
		for _, l := range strings.Split(doc, "\n") {
			for _, out := range m.Line(l) {
				if n := ansi.StringWidth(out); n > w {
					t.Errorf("width %d: %q is %d cells", w, ansi.Strip(out), n)
				}
			}
		}
	}
}

// Partial renders the incomplete last line without changing the state:
// a fence opened in a partial line is not open after it.
func TestPartialKeepsState(t *testing.T) {
	m := NewMarkdown(style.New(style.Options{NoColor: true}), 40)
	m.Partial("```go")
	if m.InCode() {
		t.Fatal("Partial opened the code block")
	}
	m.Line("```go")
	if !m.InCode() {
		t.Fatal("Line did not open the code block")
	}
}

// Code is coloured by kind: keywords, strings, numbers and comments get
// their styles; an unknown language is plain code.
func TestHighlight(t *testing.T) {
	th := style.New(style.Options{})
	got := Highlight(th, "go", `return "x", 42 // done`)
	for _, want := range []string{th.Keyword.Render("return"), th.String.Render(`"x"`), th.Number.Render("42"), th.Comment.Render("// done")} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	if ansi.Strip(got) != `return "x", 42 // done` {
		t.Errorf("the text changed: %q", ansi.Strip(got))
	}
	if got := Highlight(th, "nolang", "x := 1"); got != th.Code.Render("x := 1") {
		t.Errorf("unknown language: %q", got)
	}
}

// A diff shows the changed lines with context, removals before
// additions, gaps as an ellipsis, and a cut with the count left out.
func TestDiff(t *testing.T) {
	th := style.New(style.Options{NoColor: true})
	var old, new []string
	for i := 1; i <= 20; i++ {
		old = append(old, "line "+strings.Repeat("x", i%3))
		new = append(new, "line "+strings.Repeat("x", i%3))
	}
	new[2] = "changed three"
	new[15] = "changed sixteen"
	new = append(new[:10], append([]string{"inserted"}, new[10:]...)...)
	o := strings.Join(old, "\n") + "\n"
	var b strings.Builder
	for _, l := range Diff(th, &o, strings.Join(new, "\n")+"\n", 60, 0) {
		b.WriteString(ansi.Strip(l) + "\n")
	}
	b.WriteString("--- new file, cut at 3 lines\n")
	for _, l := range Diff(th, nil, "a\nb\nc\nd\ne\n", 60, 3) {
		b.WriteString(ansi.Strip(l) + "\n")
	}
	golden(t, "diff", b.String())
	if add, del := DiffStat(&o, strings.Join(new, "\n")+"\n"); add != 3 || del != 2 {
		t.Errorf("DiffStat = +%d -%d, want +3 -2", add, del)
	}
}

// A diff too large for the table still shows every change.
func TestDiffLarge(t *testing.T) {
	th := style.New(style.Options{NoColor: true})
	var a, b strings.Builder
	for i := range 3000 {
		a.WriteString("old line " + string(rune('a'+i%26)) + "\n")
		b.WriteString("new line " + string(rune('a'+i%26)) + "\n")
	}
	old := a.String()
	add, del := DiffStat(&old, b.String())
	if add != 3000 || del != 3000 {
		t.Errorf("DiffStat = +%d -%d, want +3000 -3000", add, del)
	}
	if n := len(Diff(th, &old, b.String(), 80, 40)); n != 41 {
		t.Errorf("a cut diff has %d lines, want 41", n)
	}
}

func TestCleanShowsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nnext":          "plain\ttext\nnext",
		"crlf\r\nline":               "crlf\nline",
		"\x1b]0;title\x07 \x1b[2J":   `\x1b]0;title\x07 \x1b[2J`,
		"c1 \u009b2J \u0085 del\x7f": `c1 \u009b2J \u0085 del\x7f`,
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := CleanLine("a\tb\nc\x1b[H"), `a b\x0ac\x1b[H`; got != want {
		t.Errorf("CleanLine = %q, want %q", got, want)
	}
}

func TestDiffShowsEscapes(t *testing.T) {
	th := style.New(style.Options{NoColor: true})
	old := "same\n"
	lines := Diff(th, &old, "same\nnew \x1b]0;PWN\x07 line\r\n", 80, 0)
	got := ansi.Strip(strings.Join(lines, "\n"))
	if !strings.Contains(got, `+ new \x1b]0;PWN\x07 line`) || strings.ContainsAny(got, "\x1b\x07\r") {
		t.Fatalf("the diff passes an escape on:\n%q", got)
	}
}
