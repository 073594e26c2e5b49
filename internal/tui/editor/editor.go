// Package editor is the terminal client's input editor: a multi-line
// prompt box with history, folded pastes and `@path` completion.
//
// The editor is a Bubble Tea component. The app keeps one *Model, hands it
// every message it does not consume itself (keys, pastes, window sizes) with
// Update, and draws View above its footer. The keys the editor uses:
//
//	enter                      submit (a SubmitMsg comes back as a command)
//	shift+enter, alt+enter,    insert a newline (so does a "\" typed just
//	ctrl+j                     before enter, for terminals that send no
//	                           shift+enter)
//	up / down                  move between lines; on the first (last) line,
//	                           step back (forward) through the history
//	left, right, home, end,    move; ctrl+a / ctrl+e go to the line's start
//	alt+left/right, alt+b/f    and end; alt moves by words
//	backspace, delete,         delete; ctrl+u / ctrl+k delete to the line's
//	ctrl+u, ctrl+k, ctrl+w,    start / end; ctrl+w and alt+backspace delete
//	alt+backspace              the word before the cursor
//
// While `@path` completion is open (the word at the cursor starts with "@"),
// up and down choose, tab and enter accept, and esc closes it. The editor
// leaves every other key alone (ctrl+c, esc, tab, shift+tab, page keys; and
// ctrl+d on an empty input, which it deletes forward with otherwise): the
// app handles those before calling Update, and asks Completing before it
// gives esc or tab a meaning of its own.
//
// A paste of more than FoldLines lines or FoldBytes bytes shows as one
// placeholder, "[pasted 120 lines #1]"; Value and the SubmitMsg carry the
// pasted text in its place. A placeholder the user edits is no longer one
// and is sent as typed.
package editor

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// FoldLines and FoldBytes are the sizes above which a paste is folded.
const (
	FoldLines = 10
	FoldBytes = 1000
)

// tabWidth is how many cells a tab takes on screen.
const tabWidth = 4

// SubmitMsg is what the editor sends (as a command's message) when the user
// presses enter on a non-empty input: Text has every folded paste expanded.
// The input is cleared and Text added to the history.
type SubmitMsg struct {
	Text string
}

// Options configure a Model. Zero values are usable.
type Options struct {
	// Prompt starts the first line ("> " when empty); the lines after it are
	// indented by as many cells.
	Prompt string
	// Placeholder is shown, dimmed, while the input is empty.
	Placeholder string
	// Width is the width in cells (80 when zero); SetWidth changes it.
	Width int
	// MaxHeight is how many rows the input takes at most (10 when zero); a
	// longer input scrolls to keep the cursor in view.
	MaxHeight int
	// History is where submitted inputs are kept and recalled from; nil
	// keeps them in memory only.
	History *History
	// WorkDir is the folder `@path` completes in; empty turns completion
	// off.
	WorkDir string
	// Styles are the colours; DefaultStyles when zero.
	Styles *Styles
}

// Styles are how the editor draws its parts.
type Styles struct {
	Prompt      lipgloss.Style
	Text        lipgloss.Style
	Placeholder lipgloss.Style
	Cursor      lipgloss.Style
	Fold        lipgloss.Style
	// Completion styles the `@path` list.
	Item, Selected, More lipgloss.Style
}

// DefaultStyles are the editor's colours; with NO_COLOR the program's
// renderer drops the colours and keeps reverse video for the cursor.
func DefaultStyles() *Styles {
	return &Styles{
		Prompt:      lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true),
		Text:        lipgloss.NewStyle(),
		Placeholder: lipgloss.NewStyle().Faint(true),
		Cursor:      lipgloss.NewStyle().Reverse(true),
		Fold:        lipgloss.NewStyle().Foreground(lipgloss.Color("5")),
		Item:        lipgloss.NewStyle().Faint(true),
		Selected:    lipgloss.NewStyle().Reverse(true),
		More:        lipgloss.NewStyle().Faint(true),
	}
}

// Model is the editor's state. Create it with New.
type Model struct {
	opts   Options
	st     *Styles
	width  int
	lines  [][]rune
	row    int // the cursor's line
	col    int // the cursor's rune index in its line
	top    int // the first visual row shown
	blur   bool
	folds  map[string]string // placeholder → pasted text
	nfolds int

	// history browsing: hpos is the entry shown, len(entries) for the draft.
	hpos  int
	draft string

	comp completion
}

// New returns an empty editor.
func New(o Options) *Model {
	if o.Prompt == "" {
		o.Prompt = "> "
	}
	if o.MaxHeight <= 0 {
		o.MaxHeight = 10
	}
	m := &Model{opts: o, st: o.Styles, width: o.Width, lines: [][]rune{nil}, folds: map[string]string{}}
	if m.st == nil {
		m.st = DefaultStyles()
	}
	if m.width <= 0 {
		m.width = 80
	}
	m.hpos = m.opts.History.Len()
	return m
}

// SetWidth sets the width in cells (the app calls it on tea.WindowSizeMsg;
// Update does too).
func (m *Model) SetWidth(w int) {
	if w > 0 {
		m.width = w
	}
}

// Focus shows the cursor; Blur hides it (while a panel or picker has the
// keys).
func (m *Model) Focus() { m.blur = false }

// Blur hides the cursor.
func (m *Model) Blur() { m.blur = true }

// Value is the input as it will be submitted: folded pastes expanded.
func (m *Model) Value() string { return m.expand(m.raw()) }

// Text is the input as shown, placeholders of folded pastes included.
func (m *Model) Text() string { return m.raw() }

// Empty says whether the input has nothing in it.
func (m *Model) Empty() bool { return len(m.lines) == 1 && len(m.lines[0]) == 0 }

// SetValue replaces the input with s (e.g. `zot "prompt"` pre-fills it) and
// puts the cursor at its end.
func (m *Model) SetValue(s string) {
	m.folds = map[string]string{}
	m.nfolds = 0
	m.setRaw(s)
	m.comp.close()
}

// Reset empties the input.
func (m *Model) Reset() {
	m.SetValue("")
	m.hpos = m.opts.History.Len()
	m.draft = ""
}

// Insert puts s at the cursor (an extension's `insert` action), folding it
// as a paste would when it is large.
func (m *Model) Insert(s string) { m.paste(s) }

// Cursor is the cursor's line and its column in runes.
func (m *Model) Cursor() (line, col int) { return m.row, m.col }

// Completing says whether the `@path` list is open: esc and tab belong to it.
func (m *Model) Completing() bool { return m.comp.open }

// Update handles a message; it returns a command when the input was
// submitted (its message is a SubmitMsg).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetWidth(msg.Width)
	case tea.PasteMsg:
		m.paste(msg.Content)
		m.refreshCompletion()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.comp.open {
		switch k.Keystroke() {
		case "up", "ctrl+p":
			m.comp.move(-1)
			return nil
		case "down", "ctrl+n":
			m.comp.move(1)
			return nil
		case "tab", "enter":
			m.acceptCompletion()
			return nil
		case "esc":
			m.comp.dismiss()
			return nil
		}
	}
	defer m.refreshCompletion()
	switch k.Keystroke() {
	case "enter":
		if m.col > 0 && m.lines[m.row][m.col-1] == '\\' {
			m.deleteBack(1)
			m.newline()
			return nil
		}
		return m.submit()
	case "shift+enter", "alt+enter", "ctrl+j", "ctrl+enter":
		m.newline()
	case "backspace", "ctrl+h", "shift+backspace":
		m.backspace()
	case "delete", "ctrl+d":
		if k.Keystroke() == "ctrl+d" && m.Empty() {
			return nil
		}
		m.deleteForward()
	case "left", "ctrl+b":
		m.left()
	case "right", "ctrl+f":
		m.right()
	case "home", "ctrl+a":
		m.col = 0
	case "end", "ctrl+e":
		m.col = len(m.lines[m.row])
	case "alt+left", "alt+b", "ctrl+left":
		m.wordLeft()
	case "alt+right", "alt+f", "ctrl+right":
		m.wordRight()
	case "ctrl+u":
		m.lines[m.row] = append([]rune(nil), m.lines[m.row][m.col:]...)
		m.col = 0
	case "ctrl+k":
		m.lines[m.row] = m.lines[m.row][:m.col]
	case "ctrl+w", "alt+backspace", "ctrl+backspace":
		if m.col == 0 {
			m.backspace()
			break
		}
		c := m.col
		m.wordLeft() // stays on the line: the cursor was past its start
		n := c - m.col
		m.col = c
		m.deleteBack(n)
	case "up":
		if m.row == 0 {
			m.historyBack()
		} else {
			m.row--
			m.col = min(m.col, len(m.lines[m.row]))
		}
	case "down":
		if m.row == len(m.lines)-1 {
			m.historyForward()
		} else {
			m.row++
			m.col = min(m.col, len(m.lines[m.row]))
		}
	default:
		if k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModSuper|tea.ModMeta) == 0 {
			m.insert(k.Text)
		}
	}
	return nil
}

func (m *Model) submit() tea.Cmd {
	text := m.Value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.opts.History.Add(text)
	m.Reset()
	return func() tea.Msg { return SubmitMsg{Text: text} }
}

// --- editing -----------------------------------------------------------

func (m *Model) raw() string {
	var b strings.Builder
	for i, l := range m.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(l))
	}
	return b.String()
}

func (m *Model) setRaw(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	parts := strings.Split(s, "\n")
	m.lines = make([][]rune, len(parts))
	for i, p := range parts {
		m.lines[i] = []rune(p)
	}
	m.row = len(m.lines) - 1
	m.col = len(m.lines[m.row])
}

func (m *Model) expand(s string) string {
	for ph, text := range m.folds {
		s = strings.ReplaceAll(s, ph, text)
	}
	return s
}

func (m *Model) insert(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			m.newline()
		}
		rs := []rune(part)
		rs = removeControls(rs)
		line := m.lines[m.row]
		nl := make([]rune, 0, len(line)+len(rs))
		nl = append(append(append(nl, line[:m.col]...), rs...), line[m.col:]...)
		m.lines[m.row] = nl
		m.col += len(rs)
	}
}

// removeControls drops control characters but tabs (a paste's escape
// sequences would otherwise reach the screen).
func removeControls(rs []rune) []rune {
	out := rs[:0:0]
	for _, r := range rs {
		if r == '\t' || !unicode.IsControl(r) {
			out = append(out, r)
		}
	}
	return out
}

func (m *Model) paste(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	n := strings.Count(s, "\n") + 1
	if strings.HasSuffix(s, "\n") {
		n--
	}
	if n > FoldLines || len(s) > FoldBytes {
		m.nfolds++
		var ph string
		if n > 1 {
			ph = fmt.Sprintf("[pasted %d lines #%d]", n, m.nfolds)
		} else {
			ph = fmt.Sprintf("[pasted %d chars #%d]", len([]rune(s)), m.nfolds)
		}
		m.folds[ph] = s
		m.insert(ph)
		return
	}
	m.insert(s)
}

func (m *Model) newline() {
	line := m.lines[m.row]
	head := append([]rune(nil), line[:m.col]...)
	tail := append([]rune(nil), line[m.col:]...)
	m.lines[m.row] = head
	m.lines = append(m.lines, nil)
	copy(m.lines[m.row+2:], m.lines[m.row+1:])
	m.lines[m.row+1] = tail
	m.row++
	m.col = 0
}

func (m *Model) backspace() {
	if m.col > 0 {
		m.deleteBack(1)
		return
	}
	if m.row == 0 {
		return
	}
	prev := m.lines[m.row-1]
	m.col = len(prev)
	m.lines[m.row-1] = append(prev, m.lines[m.row]...)
	m.lines = append(m.lines[:m.row], m.lines[m.row+1:]...)
	m.row--
}

func (m *Model) deleteBack(n int) {
	line := m.lines[m.row]
	m.lines[m.row] = append(line[:m.col-n], line[m.col:]...)
	m.col -= n
}

func (m *Model) deleteForward() {
	line := m.lines[m.row]
	if m.col < len(line) {
		m.lines[m.row] = append(line[:m.col], line[m.col+1:]...)
		return
	}
	if m.row < len(m.lines)-1 {
		m.lines[m.row] = append(line, m.lines[m.row+1]...)
		m.lines = append(m.lines[:m.row+1], m.lines[m.row+2:]...)
	}
}

func (m *Model) left() {
	if m.col > 0 {
		m.col--
	} else if m.row > 0 {
		m.row--
		m.col = len(m.lines[m.row])
	}
}

func (m *Model) right() {
	if m.col < len(m.lines[m.row]) {
		m.col++
	} else if m.row < len(m.lines)-1 {
		m.row++
		m.col = 0
	}
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func (m *Model) wordLeft() {
	if m.col == 0 {
		m.left()
		return
	}
	l := m.lines[m.row]
	for m.col > 0 && !isWord(l[m.col-1]) {
		m.col--
	}
	for m.col > 0 && isWord(l[m.col-1]) {
		m.col--
	}
}

func (m *Model) wordRight() {
	l := m.lines[m.row]
	if m.col == len(l) {
		m.right()
		return
	}
	for m.col < len(l) && !isWord(l[m.col]) {
		m.col++
	}
	for m.col < len(l) && isWord(l[m.col]) {
		m.col++
	}
}

// --- history -----------------------------------------------------------

func (m *Model) historyBack() {
	h := m.opts.History
	if m.hpos == 0 || h.Len() == 0 {
		return
	}
	if m.hpos >= h.Len() {
		m.hpos = h.Len()
		m.draft = m.raw()
	}
	m.hpos--
	m.setRaw(h.At(m.hpos))
	m.row, m.col = 0, len(m.lines[0])
}

func (m *Model) historyForward() {
	h := m.opts.History
	if m.hpos >= h.Len() {
		return
	}
	m.hpos++
	if m.hpos == h.Len() {
		m.setRaw(m.draft)
		return
	}
	m.setRaw(h.At(m.hpos))
}

// --- view --------------------------------------------------------------

// visual is one screen row of the input: a span of one line.
type visual struct {
	line, from, to int
}

// layout wraps the lines into rows of at most avail cells.
func (m *Model) layout(avail int) []visual {
	var rows []visual
	for i, l := range m.lines {
		from, w := 0, 0
		for j, r := range l {
			rw := runeWidth(r)
			if w+rw > avail && j > from {
				rows = append(rows, visual{i, from, j})
				from, w = j, 0
			}
			w += rw
		}
		rows = append(rows, visual{i, from, len(l)})
		// A full last row leaves the cursor at the line's end a row of its own.
		if w >= avail && i == m.row && m.col == len(l) && len(l) > 0 {
			rows = append(rows, visual{i, len(l), len(l)})
		}
	}
	return rows
}

func runeWidth(r rune) int {
	if r == '\t' {
		return tabWidth
	}
	w := ansi.StringWidth(string(r))
	if w < 1 {
		return 1
	}
	return w
}

// cursorRow is the index in rows of the row the cursor is on.
func (m *Model) cursorRow(rows []visual) int {
	last := 0
	for i, v := range rows {
		if v.line != m.row {
			continue
		}
		last = i
		if m.col >= v.from && m.col < v.to {
			return i
		}
	}
	return last
}

// View draws the `@path` list (when open) above the input rows.
func (m *Model) View() string {
	pw := ansi.StringWidth(m.opts.Prompt)
	avail := max(m.width-pw, 1)
	indent := strings.Repeat(" ", pw)
	var b strings.Builder
	if m.comp.open {
		b.WriteString(m.comp.view(m.width, m.st))
	}
	if m.Empty() {
		b.WriteString(m.st.Prompt.Render(m.opts.Prompt))
		ph := ansi.Truncate(m.opts.Placeholder, avail-1, "…")
		if m.blur {
			b.WriteString(m.st.Placeholder.Render(ph))
		} else if ph != "" {
			rs := []rune(ph)
			b.WriteString(m.st.Cursor.Render(string(rs[0])))
			b.WriteString(m.st.Placeholder.Render(string(rs[1:])))
		} else {
			b.WriteString(m.st.Cursor.Render(" "))
		}
		return b.String()
	}
	rows := m.layout(avail)
	cr := m.cursorRow(rows)
	h := min(len(rows), m.opts.MaxHeight)
	if cr < m.top {
		m.top = cr
	}
	if cr >= m.top+h {
		m.top = cr - h + 1
	}
	m.top = max(min(m.top, len(rows)-h), 0)
	for i := m.top; i < m.top+h; i++ {
		if i > m.top {
			b.WriteByte('\n')
		}
		v := rows[i]
		if i == 0 {
			b.WriteString(m.st.Prompt.Render(m.opts.Prompt))
		} else {
			b.WriteString(indent)
		}
		seg := m.lines[v.line][v.from:v.to]
		cur := -1
		if !m.blur && i == cr {
			cur = m.col - v.from
		}
		b.WriteString(m.drawSegment(seg, cur))
	}
	return b.String()
}

// drawSegment draws one row's runes, the cursor on rune cur (-1 for none),
// placeholders of folded pastes in their style.
func (m *Model) drawSegment(seg []rune, cur int) string {
	s := string(seg)
	var spans [][2]int // rune ranges of placeholders
	for ph := range m.folds {
		for off := 0; ; {
			i := strings.Index(s[off:], ph)
			if i < 0 {
				break
			}
			start := len([]rune(s[:off+i]))
			spans = append(spans, [2]int{start, start + len([]rune(ph))})
			off += i + len(ph)
		}
	}
	inFold := func(i int) bool {
		for _, sp := range spans {
			if i >= sp[0] && i < sp[1] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	var run []rune
	runFold := false
	flush := func() {
		if len(run) == 0 {
			return
		}
		if runFold {
			b.WriteString(m.st.Fold.Render(string(run)))
		} else {
			b.WriteString(m.st.Text.Render(string(run)))
		}
		run = run[:0]
	}
	for i, r := range seg {
		if i == cur {
			flush()
			b.WriteString(m.st.Cursor.Render(display(r)))
			continue
		}
		f := inFold(i)
		if f != runFold {
			flush()
			runFold = f
		}
		run = append(run, []rune(display(r))...)
	}
	flush()
	if cur >= len(seg) {
		b.WriteString(m.st.Cursor.Render(" "))
	}
	return b.String()
}

func display(r rune) string {
	if r == '\t' {
		return strings.Repeat(" ", tabWidth)
	}
	return string(r)
}
