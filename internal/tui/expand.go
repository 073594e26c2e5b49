package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/render"
)

// expanded is a block shown whole over the input (Ctrl-O): the last tool
// call's output or diffs, which the scrollback shows cut to their first
// lines. Its lines come from the block each time it is drawn, so a call
// still running shows its newest output; the view follows the end until
// the person scrolls up.
type expanded struct {
	title  string
	lines  func(width int) []string
	top    int  // the first line shown
	follow bool // the view shows the end, whatever comes
}

// toggleExpand opens the last tool call's whole output, or closes it.
func (m *model) toggleExpand() tea.Cmd {
	if m.expand != nil {
		m.expand = nil
		return nil
	}
	tc := m.lastTool
	if tc == nil {
		m.status = "No tool output to expand yet."
		return nil
	}
	m.expand = &expanded{title: tc.title, follow: true, lines: func(width int) []string { return m.toolBody(tc, width) }}
	return nil
}

// expandKey handles a key while a block is expanded: the keys that move
// it, and esc or ctrl+o, which close it. It reports whether it took the
// key; the others go on to the input.
func (m *model) expandKey(k tea.KeyPressMsg) bool {
	e := m.expand
	rows := m.expandRows()
	switch k.String() {
	case "esc", "ctrl+o":
		m.expand = nil
	case "up":
		e.top, e.follow = e.top-1, false
	case "down":
		e.top++
	case "pgup":
		e.top, e.follow = e.top-rows, false
	case "pgdown", "space":
		e.top += rows
	case "home":
		e.top, e.follow = 0, false
	case "end":
		e.follow = true
	default:
		return false
	}
	return true
}

// expandRows is how many lines of an expanded block show at a time.
func (m *model) expandRows() int { return max(min(m.height/2, m.height-10), 3) }

// expandLines draws the expanded block: a head with its title and where
// the window is, the window, and the keys.
func (m *model) expandLines() []string {
	e := m.expand
	g := m.t.G
	all := e.lines(m.width - 2)
	rows := m.expandRows()
	last := max(len(all)-rows, 0)
	if e.follow || e.top >= last {
		e.top, e.follow = last, true
	}
	e.top = max(e.top, 0)
	end := min(e.top+rows, len(all))
	where := fmt.Sprintf("%d lines", len(all))
	if len(all) > rows {
		where = fmt.Sprintf("lines %d-%d of %d", e.top+1, end, len(all))
	}
	head := g.Rule + g.Rule + " " + ansi.Truncate(e.title, max(m.width-len(where)-8, 8), g.Ellipsis) + " · " + where + " "
	head += strings.Repeat(g.Rule, max(m.width-ansi.StringWidth(head), 0))
	out := []string{m.t.Faint.Render(head)}
	for _, l := range all[e.top:end] {
		out = append(out, "  "+l)
	}
	keys := "↑/↓ pgup/pgdn home/end scroll · ctrl+o or esc collapses"
	if g.Arrow == "->" {
		keys = "up/down pgup/pgdn home/end scroll · ctrl+o or esc collapses"
	}
	return append(out, m.t.Faint.Render(ansi.Truncate(keys, m.width, g.Ellipsis)))
}

// toolBody is a call's whole output, its images and its diffs, in lines
// of width cells at most.
func (m *model) toolBody(tc *toolCall, width int) []string {
	if tc.child != nil {
		return m.childBody(tc.child, width) // child.go
	}
	var out []string
	for _, d := range tc.diffs {
		add, del := render.DiffStat(d.OldText, d.NewText)
		out = append(out, m.t.Faint.Render(fmt.Sprintf("%s +%d -%d", cleanLine(d.Path), add, del)))
		out = append(out, render.Diff(m.t, d.OldText, d.NewText, width, 0)...)
	}
	if tc.output != "" {
		st := m.t.Plain
		if tc.status == acp.ToolCallStatusFailed {
			st = m.t.Error
		}
		for _, l := range strings.Split(strings.TrimRight(ansi.Strip(tc.output), "\n"), "\n") {
			l = strings.ReplaceAll(strings.ReplaceAll(l, "\t", "    "), "\r", "")
			for _, row := range strings.Split(ansi.Hardwrap(l, max(width, 1), true), "\n") {
				out = append(out, st.Render(row))
			}
		}
	}
	for _, img := range tc.images {
		out = append(out, m.t.Faint.Render(img))
	}
	if len(out) == 0 {
		out = append(out, m.t.Faint.Render("(no output)"))
	}
	return out
}

// imageLine is the one line an image stands for: its type and size.
func imageLine(img *acp.ImageContent) string {
	mime := cleanLine(img.MimeType)
	if mime == "" {
		mime = "image"
	}
	n := len(img.Data) * 3 / 4
	switch {
	case strings.HasSuffix(img.Data, "=="):
		n -= 2
	case strings.HasSuffix(img.Data, "="):
		n--
	}
	if img.Data == "" {
		return "[image " + mime + "]"
	}
	return fmt.Sprintf("[image %s, %s]", mime, byteSize(n))
}

// byteSize writes n bytes short: 512 B, 12.3 KB, 4.1 MB.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MB"
	case n >= 1<<10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<10)), ".0") + " KB"
	}
	return fmt.Sprintf("%d B", n)
}
