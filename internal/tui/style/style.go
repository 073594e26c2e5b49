// Package style holds the terminal client's looks: the colours and
// attributes of each kind of text, and the glyphs it draws with, in a
// Unicode set and a plain ASCII set for terminals without line drawing.
// NO_COLOR gives a theme with attributes (bold, italic, faint) and no
// colour.
package style

import (
	"os"
	"strconv"
	"strings"
)

// Glyphs are the symbols the screen is drawn with.
type Glyphs struct {
	Bullet, Quote, Rule, Prompt            string
	Pending, Running, Done, Failed         string
	Gutter, Thinking, Ellipsis, Arrow      string
	Spinner                                []string
	BoxH, BoxV, BoxTL, BoxTR, BoxBL, BoxBR string
}

// Unicode is the default set.
var Unicode = Glyphs{
	Bullet: "•", Quote: "│", Rule: "─", Prompt: "›",
	Pending: "○", Running: "◐", Done: "✓", Failed: "✗",
	Gutter: "│", Thinking: "∴", Ellipsis: "…", Arrow: "→",
	Spinner: []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"},
	BoxH:    "─", BoxV: "│", BoxTL: "╭", BoxTR: "╮", BoxBL: "╰", BoxBR: "╯",
}

// ASCII is the set for terminals without Unicode line drawing.
var ASCII = Glyphs{
	Bullet: "*", Quote: "|", Rule: "-", Prompt: ">",
	Pending: "o", Running: "~", Done: "+", Failed: "x",
	Gutter: "|", Thinking: "~", Ellipsis: "...", Arrow: "->",
	Spinner: []string{"|", "/", "-", "\\"},
	BoxH:    "-", BoxV: "|", BoxTL: "+", BoxTR: "+", BoxBL: "+", BoxBR: "+",
}

// Theme is every style the client draws with.
type Theme struct {
	G Glyphs

	Plain, Bold, Italic, Faint, Code, Heading, Link, Quote Style
	User, Accent, OK, Warn, Error, Thinking                Style
	Keyword, String, Comment, Number, Type                 Style
	Add, Del, Hunk                                         Style
}

// Style is a set of SGR attributes and a colour of the 16 ANSI ones. It
// is a few bytes and renders with two escape sequences: the answer is
// drawn a chunk at a time, and a general layout engine costs more per
// chunk than the rest of the client together.
type Style struct {
	bold, faint, italic, underline, reverse bool
	fg                                      int // 0: none; else the colour + 1
}

// Bold returns s with bold set to v; Faint, Italic, Underline and
// Reverse likewise.
func (s Style) Bold(v bool) Style      { s.bold = v; return s }
func (s Style) Faint(v bool) Style     { s.faint = v; return s }
func (s Style) Italic(v bool) Style    { s.italic = v; return s }
func (s Style) Underline(v bool) Style { s.underline = v; return s }
func (s Style) Reverse(v bool) Style   { s.reverse = v; return s }

// Foreground returns s in colour c, one of the 16 ANSI colours (0-15).
func (s Style) Foreground(c int) Style { s.fg = c + 1; return s }

// Render wraps text in the style's escape sequences (none for the plain
// style or empty text).
func (s Style) Render(text string) string {
	if text == "" || s == (Style{}) {
		return text
	}
	b := make([]byte, 0, len(text)+16)
	b = append(b, "\x1b["...)
	n := len(b)
	add := func(code int) {
		if len(b) > n {
			b = append(b, ';')
		}
		b = strconv.AppendInt(b, int64(code), 10)
	}
	if s.bold {
		add(1)
	}
	if s.faint {
		add(2)
	}
	if s.italic {
		add(3)
	}
	if s.underline {
		add(4)
	}
	if s.reverse {
		add(7)
	}
	if s.fg > 8 {
		add(90 + s.fg - 9)
	} else if s.fg > 0 {
		add(30 + s.fg - 1)
	}
	b = append(b, 'm')
	b = append(b, text...)
	b = append(b, "\x1b[m"...)
	return string(b)
}

// Options choose a theme.
type Options struct {
	// NoColor leaves colours out (NO_COLOR); attributes stay.
	NoColor bool
	// ASCII draws with ASCII glyphs only.
	ASCII bool
}

// FromEnv reads the environment: NO_COLOR (any value) turns colour off;
// ZOT_ASCII=1, TERM=linux or dumb, or a locale that is not UTF-8 turn
// Unicode glyphs off.
func FromEnv(getenv func(string) string) Options {
	if getenv == nil {
		getenv = os.Getenv
	}
	o := Options{NoColor: getenv("NO_COLOR") != ""}
	switch {
	case getenv("ZOT_ASCII") == "1":
		o.ASCII = true
	case getenv("ZOT_ASCII") == "0":
	case getenv("TERM") == "linux" || getenv("TERM") == "dumb":
		o.ASCII = true
	default:
		locale := getenv("LC_ALL")
		if locale == "" {
			locale = getenv("LC_CTYPE")
		}
		if locale == "" {
			locale = getenv("LANG")
		}
		l := strings.ToLower(locale)
		if locale != "" && !strings.Contains(l, "utf-8") && !strings.Contains(l, "utf8") {
			o.ASCII = true
		}
	}
	return o
}

// New returns the theme o asks for.
func New(o Options) *Theme {
	t := &Theme{G: Unicode}
	if o.ASCII {
		t.G = ASCII
	}
	var s Style
	t.Plain = s
	t.Bold = s.Bold(true)
	t.Italic = s.Italic(true)
	t.Faint = s.Faint(true)
	t.Heading = s.Bold(true)
	t.Thinking = s.Faint(true).Italic(true)
	t.Quote = s.Italic(true)
	t.User = s.Bold(true)
	t.Link = s.Underline(true)
	t.Code = s
	t.Accent = s.Bold(true)
	t.OK, t.Warn, t.Error = s, s.Bold(true), s.Bold(true)
	t.Keyword, t.String, t.Comment, t.Number, t.Type = s.Bold(true), s, s.Faint(true), s, s
	t.Add, t.Del, t.Hunk = s, s, s.Faint(true)
	if o.NoColor {
		return t
	}
	c := func(n string) int { i, _ := strconv.Atoi(n); return i }
	t.Heading = t.Heading.Foreground(c("12"))
	t.Code = s.Foreground(c("11"))
	t.Link = t.Link.Foreground(c("14"))
	t.Quote = t.Quote.Foreground(c("8"))
	t.User = t.User.Foreground(c("14"))
	t.Accent = t.Accent.Foreground(c("13"))
	t.OK = s.Foreground(c("10"))
	t.Warn = t.Warn.Foreground(c("11"))
	t.Error = t.Error.Foreground(c("9"))
	t.Keyword = s.Foreground(c("13"))
	t.String = s.Foreground(c("10"))
	t.Comment = s.Foreground(c("8")).Italic(true)
	t.Number = s.Foreground(c("11"))
	t.Type = s.Foreground(c("14"))
	t.Add = s.Foreground(c("10"))
	t.Del = s.Foreground(c("9"))
	t.Hunk = s.Foreground(c("12")).Faint(true)
	return t
}
