package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// lineInput is the prompt's text box: multi-line (alt+enter, shift+enter
// or ctrl+j add a line), a cursor moved with the arrows, home and end,
// and the emacs keys ctrl+a, ctrl+e, ctrl+u, ctrl+k, ctrl+w.
type lineInput struct {
	text   []rune
	cursor int // index into text
	width  int
}

func (in *lineInput) Value() string     { return string(in.text) }
func (in *lineInput) Empty() bool       { return len(in.text) == 0 }
func (in *lineInput) SetWidth(w int)    { in.width = w }
func (in *lineInput) Reset()            { in.text, in.cursor = nil, 0 }
func (in *lineInput) SetValue(s string) { in.text = []rune(s); in.cursor = len(in.text) }
func (in *lineInput) Insert(s string)   { in.insert([]rune(s)) }
func (in *lineInput) insert(rs []rune) {
	rs = []rune(strings.ReplaceAll(strings.ReplaceAll(string(rs), "\r\n", "\n"), "\r", "\n"))
	in.text = append(in.text[:in.cursor], append(rs, in.text[in.cursor:]...)...)
	in.cursor += len(rs)
}

// key handles an editing key; it reports whether it used it.
func (in *lineInput) key(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "alt+enter", "shift+enter", "ctrl+j":
		in.insert([]rune{'\n'})
	case "backspace", "ctrl+h":
		if in.cursor > 0 {
			in.text = append(in.text[:in.cursor-1], in.text[in.cursor:]...)
			in.cursor--
		}
	case "delete":
		if in.cursor < len(in.text) {
			in.text = append(in.text[:in.cursor], in.text[in.cursor+1:]...)
		}
	case "left", "ctrl+b":
		in.cursor = max(0, in.cursor-1)
	case "right", "ctrl+f":
		in.cursor = min(len(in.text), in.cursor+1)
	case "home", "ctrl+a":
		in.cursor = in.lineStart()
	case "end", "ctrl+e":
		in.cursor = in.lineEnd()
	case "ctrl+u":
		s := in.lineStart()
		in.text = append(in.text[:s], in.text[in.cursor:]...)
		in.cursor = s
	case "ctrl+k":
		e := in.lineEnd()
		in.text = append(in.text[:in.cursor], in.text[e:]...)
	case "ctrl+w", "alt+backspace":
		s := in.cursor
		for s > 0 && in.text[s-1] == ' ' {
			s--
		}
		for s > 0 && in.text[s-1] != ' ' && in.text[s-1] != '\n' {
			s--
		}
		in.text = append(in.text[:s], in.text[in.cursor:]...)
		in.cursor = s
	default:
		if k.Text != "" && k.Mod&^1 == 0 { // no modifier but shift
			in.insert([]rune(k.Text))
			return true
		}
		return false
	}
	return true
}

func (in *lineInput) lineStart() int {
	i := in.cursor
	for i > 0 && in.text[i-1] != '\n' {
		i--
	}
	return i
}

func (in *lineInput) lineEnd() int {
	i := in.cursor
	for i < len(in.text) && in.text[i] != '\n' {
		i++
	}
	return i
}

// View draws the text after prompt, wrapped at the width, with the
// cursor as a reversed cell.
func (in *lineInput) View(prompt, cursorStyleOn, cursorStyleOff string) string {
	before := string(in.text[:in.cursor])
	at := " "
	after := ""
	if in.cursor < len(in.text) {
		at = string(in.text[in.cursor])
		after = string(in.text[in.cursor+1:])
		if at == "\n" {
			at, after = " ", "\n"+after
		}
	}
	body := before + cursorStyleOn + at + cursorStyleOff + after
	pad := strings.Repeat(" ", ansi.StringWidth(prompt))
	lines := strings.Split(body, "\n")
	w := max(in.width-ansi.StringWidth(prompt), 10)
	var out []string
	for i, l := range lines {
		for j, part := range strings.Split(ansi.Hardwrap(l, w, true), "\n") {
			if i == 0 && j == 0 {
				out = append(out, prompt+part)
			} else {
				out = append(out, pad+part)
			}
		}
	}
	return strings.Join(out, "\n")
}
