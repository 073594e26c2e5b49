// Package render turns what the agent sends into lines for the screen:
// Markdown a line at a time as it streams in (headings, emphasis, code
// spans, lists, quotes, rules, fenced code highlighted by a small
// tokenizer), and diffs of the files a tool wrote.
//
// It is written for streaming and for start-up cost: a line is rendered
// once, when it is complete, so an answer of any length costs the same per
// line, and nothing is built before the first use (no lexer tables, no
// style registry in package init: zot rpc links this package too).
package render

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/tui/style"
)

// Markdown renders Markdown source, one complete line at a time. The
// zero value is not usable: use NewMarkdown.
type Markdown struct {
	t     *style.Theme
	width int

	fence string // the fence that opened the code block ("```"), or ""
	lang  string // the code block's language
}

// NewMarkdown returns a renderer that wraps at width cells.
func NewMarkdown(t *style.Theme, width int) *Markdown {
	return &Markdown{t: t, width: max(width, 10)}
}

// SetWidth changes the width of the lines rendered from now on.
func (m *Markdown) SetWidth(w int) { m.width = max(w, 10) }

// InCode reports whether the renderer is inside a fenced code block.
func (m *Markdown) InCode() bool { return m.fence != "" }

// Line renders one complete source line (without its newline) into the
// screen lines it takes.
func (m *Markdown) Line(src string) []string {
	src = strings.ReplaceAll(src, "\t", "    ")
	src = strings.TrimRight(src, "\r")
	trimmed := strings.TrimSpace(src)
	if m.fence != "" {
		if strings.HasPrefix(trimmed, m.fence) && strings.Trim(trimmed, m.fence[:1]) == "" {
			m.fence, m.lang = "", ""
			return []string{m.t.Faint.Render(m.t.G.BoxBL + m.t.G.BoxH)}
		}
		return m.code(src)
	}
	if f := fenceOf(trimmed); f != "" {
		m.fence = f
		m.lang = strings.ToLower(strings.TrimSpace(strings.TrimLeft(trimmed, f[:1])))
		label := m.t.G.BoxTL + m.t.G.BoxH
		if m.lang != "" {
			label += " " + m.lang
		}
		return []string{m.t.Faint.Render(label)}
	}
	if trimmed == "" {
		return []string{""}
	}
	switch {
	case strings.HasPrefix(trimmed, "#"):
		level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
		if level <= 6 && (len(trimmed) == level || trimmed[level] == ' ') {
			text := strings.TrimSpace(trimmed[level:])
			return m.wrap(m.t.Heading.Render(strings.Repeat("#", level)+" ")+m.inline(text, m.t.Heading), "")
		}
	case isRule(trimmed):
		return []string{m.t.Faint.Render(strings.Repeat(m.t.G.Rule, min(m.width, 40)))}
	case strings.HasPrefix(trimmed, ">"):
		text := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
		bar := m.t.Quote.Render(m.t.G.Quote) + " "
		return m.wrap(bar+m.inline(text, m.t.Quote), bar)
	}
	indent := len(src) - len(strings.TrimLeft(src, " "))
	if marker, rest, ok := listItem(trimmed); ok {
		if marker == "" {
			marker = m.t.G.Bullet
		}
		pad := strings.Repeat(" ", min(indent, 12))
		head := pad + m.t.Accent.Render(marker) + " "
		cont := pad + strings.Repeat(" ", ansi.StringWidth(marker)+1)
		return m.wrap(head+m.inline(rest, m.t.Plain), cont)
	}
	if strings.HasPrefix(trimmed, "|") {
		// A table row is shown as written, cut to the width.
		return []string{ansi.Truncate(m.inline(src, m.t.Plain), m.width, m.t.G.Ellipsis)}
	}
	return m.wrap(m.inline(src, m.t.Plain), "")
}

// Partial renders an incomplete last line, for the live region: the same
// as Line but without changing the renderer's state.
func (m *Markdown) Partial(src string) []string {
	saved := *m
	out := m.Line(src)
	*m = saved
	return out
}

// code renders one line of a fenced block.
func (m *Markdown) code(src string) []string {
	bar := m.t.Faint.Render(m.t.G.BoxV) + " "
	line := Highlight(m.t, m.lang, src)
	return []string{ansi.Truncate(bar+line, m.width, m.t.G.Ellipsis)}
}

// wrap word-wraps s (styled) at the width; lines after the first start
// with cont (unless it takes more than half the width).
func (m *Markdown) wrap(s, cont string) []string {
	w := m.width
	if ansi.StringWidth(s) <= w {
		return []string{s}
	}
	wrapped := ansi.Wrap(s, w, "")
	lines := strings.Split(wrapped, "\n")
	if cont == "" {
		return lines
	}
	// Re-wrap the continuation lines narrower so cont fits.
	out := []string{lines[0]}
	rest := strings.Join(lines[1:], " ")
	if ansi.StringWidth(cont) > w/2 {
		cont = ""
	}
	cw := max(w-ansi.StringWidth(cont), 1)
	for _, l := range strings.Split(ansi.Wrap(rest, cw, ""), "\n") {
		out = append(out, cont+l)
	}
	return out
}

func fenceOf(s string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(s, f) {
			n := len(s) - len(strings.TrimLeft(s, f[:1]))
			return strings.Repeat(f[:1], n)
		}
	}
	return ""
}

func isRule(s string) bool {
	if len(s) < 3 {
		return false
	}
	for _, c := range []string{"-", "*", "_"} {
		if strings.Trim(strings.ReplaceAll(s, " ", ""), c) == "" {
			return true
		}
	}
	return false
}

// listItem splits a list item into its marker and its text; the marker
// of a bullet item is "" (the theme's bullet is drawn).
func listItem(s string) (marker, rest string, ok bool) {
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ' {
		rest = s[2:]
		if strings.HasPrefix(rest, "[ ] ") {
			return "[ ]", rest[4:], true
		}
		if strings.HasPrefix(rest, "[x] ") || strings.HasPrefix(rest, "[X] ") {
			return "[x]", rest[4:], true
		}
		return "", rest, true
	}
	i := 0
	for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return s[:i+1], s[i+2:], true
	}
	return "", "", false
}

// inline renders the inline Markdown of one line: `code`, **bold**,
// *italic* and _italic_, ~~struck~~ (shown plain), [text](url) as text and
// the url. base is the style of the text around them.
func (m *Markdown) inline(s string, base style.Style) string {
	var out strings.Builder
	var run strings.Builder
	flush := func(st style.Style) {
		if run.Len() > 0 {
			out.WriteString(st.Render(run.String()))
			run.Reset()
		}
	}
	bold, italic := false, false
	cur := func() style.Style {
		st := base
		if bold {
			st = st.Bold(true)
		}
		if italic {
			st = st.Italic(true)
		}
		return st
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs) && unicode.IsPunct(rs[i+1]):
			run.WriteRune(rs[i+1])
			i++
		case r == '`':
			j := indexRune(rs, '`', i+1)
			if j < 0 {
				run.WriteRune(r)
				continue
			}
			flush(cur())
			out.WriteString(m.t.Code.Render(string(rs[i+1 : j])))
			i = j
		case r == '*' && i+1 < len(rs) && rs[i+1] == '*', r == '_' && i+1 < len(rs) && rs[i+1] == '_' && wordEdge(rs, i, 2):
			flush(cur())
			bold = !bold
			i++
		case r == '~' && i+1 < len(rs) && rs[i+1] == '~':
			i++
		case (r == '*' || r == '_' && wordEdge(rs, i, 1)) && (italic || (i+1 < len(rs) && rs[i+1] != ' ' && indexRune(rs, r, i+1) > i+1)):
			flush(cur())
			italic = !italic
		case r == '[':
			close := indexRune(rs, ']', i+1)
			if close > 0 && close+1 < len(rs) && rs[close+1] == '(' {
				end := indexRune(rs, ')', close+2)
				if end > 0 {
					flush(cur())
					text := string(rs[i+1 : close])
					url := string(rs[close+2 : end])
					out.WriteString(m.t.Link.Render(text))
					if url != text {
						out.WriteString(m.t.Faint.Render(" (" + url + ")"))
					}
					i = end
					continue
				}
			}
			run.WriteRune(r)
		default:
			run.WriteRune(r)
		}
	}
	flush(cur())
	return out.String()
}

// wordEdge reports whether the n underscores at i stand at a word's edge
// (snake_case names keep theirs).
func wordEdge(rs []rune, i, n int) bool {
	before := i == 0 || !isWordRune(rs[i-1])
	after := i+n >= len(rs) || !isWordRune(rs[i+n])
	return before || after
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func indexRune(rs []rune, r rune, from int) int {
	for j := from; j < len(rs); j++ {
		if rs[j] == r {
			return j
		}
	}
	return -1
}
