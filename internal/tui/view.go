package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/render"
)

// View draws the live region: what of the turn is not in the scrollback
// yet, an approval, a panel or a picker, the input and the footer.
func (m *model) View() tea.View {
	sc := m.screen()
	m.drawn = max(m.drawn, strings.Count(sc, "\n")+1)
	return tea.NewView(sc)
}

// screen is the live region as text.
func (m *model) screen() string {
	var bottom []string
	if v := m.toasts.View(m.width); v != "" && !m.quit {
		bottom = append(bottom, strings.Split(v, "\n")...)
	}
	switch {
	case m.picker != nil:
		bottom = append(bottom, strings.Split(m.picker.View(m.width), "\n")...)
	case len(m.perms) > 0:
		bottom = append(bottom, m.permLines()...)
	case m.panel.IsOpen():
		bottom = append(bottom, strings.Split(m.panel.View(m.width), "\n")...)
	case m.pop.Open():
		bottom = append(bottom, strings.Split(m.pop.View(m.width), "\n")...)
	case m.expand != nil:
		bottom = append(bottom, m.expandLines()...)
	}
	if !m.quit {
		if m.picker == nil && len(m.perms) == 0 {
			// A panel ends with its own rule.
			bottom = append(bottom, m.inputLines(!m.panel.IsOpen())...)
		}
		bottom = append(bottom, m.footer()...)
	}
	live := m.liveLines()
	// The live region leaves room on the screen for a chunk of lines to
	// be inserted above it (flush), whenever that happens: the oldest
	// lines of the turn give way (they reach the scrollback when
	// finished).
	room := max(m.height-printChunk(m.height)-len(bottom)-1, 0)
	if len(live) > room {
		live = live[len(live)-room:]
	}
	return strings.Join(append(live, bottom...), "\n")
}

// liveLines are the turn's lines not yet in the scrollback.
func (m *model) liveLines() []string {
	var out []string
	if m.inFlightShown {
		out = append(out, m.inFlight...)
	}
	out = append(out, m.toPrint...)
	for _, s := range m.segs {
		switch s.kind {
		case segText:
			out = append(out, s.lines...)
			out = append(out, m.partial(s)...)
		default:
			out = append(out, m.segmentLines(s, !s.done)...)
		}
	}
	return out
}

// inputLines draws the input box, under a rule when rule is set.
func (m *model) inputLines(rule bool) []string {
	g := m.t.G
	body := m.in.View()
	if m.in.Empty() && !m.ready {
		body = m.t.User.Render(g.Prompt) + " " + m.t.Faint.Render("opening the session"+g.Ellipsis)
	}
	var lines []string
	if rule {
		lines = append(lines, m.t.Faint.Render(strings.Repeat(g.Rule, max(m.width, 1))))
	}
	if m.status != "" {
		lines = append([]string{m.t.Warn.Render(m.status)}, lines...)
	}
	return append(lines, strings.Split(body, "\n")...)
}

// footer is the model, the mode, the context used, the cost and, while a
// turn runs, a spinner with its time.
func (m *model) footer() []string {
	g := m.t.G
	var parts []string
	if model := m.option("model"); model != "" {
		parts = append(parts, cleanLine(model))
	}
	if m.mode != "" {
		parts = append(parts, "mode "+cleanLine(m.mode))
	}
	if u := m.usage; u != nil {
		ctx := "ctx " + tokens(u.Used)
		if u.Size > 0 {
			ctx += fmt.Sprintf("/%s (%d%%)", tokens(u.Size), u.Used*100/u.Size)
		}
		parts = append(parts, ctx)
		if in, out, ok := sessionTokens(u); ok {
			up, down := "↑", "↓"
			if g.Arrow == "->" {
				up, down = "in ", "out "
			}
			parts = append(parts, up+tokens(in)+" "+down+tokens(out))
		}
		if u.Cost != nil {
			parts = append(parts, fmt.Sprintf("$%.4f", u.Cost.Amount))
		}
	}
	if len(m.queued) > 0 {
		parts = append(parts, fmt.Sprintf("%d queued (/steer text: now)", len(m.queued)))
	}
	line := strings.Join(parts, " · ")
	// A turn is under way until its output is in the scrollback too: a
	// long answer is still being written a screenful at a time after
	// the agent ended the turn.
	if m.busy || (m.printing && !m.inFlightShown) {
		spin := g.Spinner[m.spin%len(g.Spinner)]
		line = m.t.Accent.Render(spin) + " " + m.t.Faint.Render(fmt.Sprintf("%ds · esc to interrupt", int(time.Since(m.started).Seconds()))) + "  " + m.t.Faint.Render(line)
	} else if line != "" {
		if hint := line + " · / for commands"; ansi.StringWidth(hint) <= m.width {
			line = hint
		}
		line = m.t.Faint.Render(line)
	}
	return []string{ansi.Truncate(line, m.width, g.Ellipsis)}
}

// sessionTokens reads the session's tokens from a usage_update's
// _meta.zot.tokens (zot's ACP server sends them; another agent may not).
func sessionTokens(u *acp.UsageUpdate) (in, out int64, ok bool) {
	z, _ := u.Meta["zot"].(map[string]any)
	t, _ := z["tokens"].(map[string]any)
	if t == nil {
		return 0, 0, false
	}
	num := func(k string) int64 { f, _ := t[k].(float64); return int64(f) }
	return num("input") + num("cacheRead") + num("cacheWrite"), num("output"), true
}

// option is the current value of a config option.
func (m *model) option(id string) string {
	for _, o := range m.options {
		if o.ID == id {
			return o.CurrentValue
		}
	}
	return ""
}

// tokens writes a token count short: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}

// permLines draws the first approval waiting: the call, its arguments
// (a diff for an edit or write) and the four options.
func (m *model) permLines() []string {
	p := m.perms[0].Request
	g := m.t.G
	title := permTitle(p)
	head := m.t.Warn.Render(g.BoxTL+g.BoxH+" Allow ") + m.t.Bold.Render(ansi.Truncate(title, m.width-12, g.Ellipsis)) + m.t.Warn.Render("?")
	out := []string{head}
	bar := m.t.Warn.Render(g.BoxV) + " "
	for _, l := range m.argLines(p.ToolCall.RawInput) {
		out = append(out, bar+l)
	}
	for i, o := range p.Options {
		mark := "  "
		name := cleanLine(o.Name)
		if i == m.permSel {
			mark = m.t.Accent.Render(g.Arrow) + " "
			name = m.t.Bold.Render(name)
		}
		out = append(out, bar+mark+fmt.Sprintf("%d ", i+1)+name)
	}
	more := ""
	if n := len(m.perms) - 1; n > 0 {
		more = fmt.Sprintf(" · %d more waiting", n)
	}
	out = append(out, m.t.Warn.Render(g.BoxBL+g.BoxH)+" "+m.t.Faint.Render(fmt.Sprintf("1-%d or ↑/↓ enter · y allow once · n or esc reject", len(p.Options))+more))
	if g.Arrow == "->" {
		out[len(out)-1] = strings.ReplaceAll(out[len(out)-1], "↑/↓", "up/down")
	}
	return out
}

// argLines shows a call's arguments: a command, a diff of an edit, the
// content of a write, or the JSON.
func (m *model) argLines(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var a struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		Content *string
		Edits   []struct {
			Old string `json:"old_text"`
			New string `json:"new_text"`
		} `json:"edits"`
	}
	_ = json.Unmarshal(raw, &a)
	w := m.width - 4
	maxLines := max(m.height/2, 6)
	switch {
	case a.Command != "":
		var out []string
		for _, l := range strings.Split(a.Command, "\n") {
			l = cleanLine(l)
			out = append(out, m.t.Code.Render(ansi.Truncate("$ "+l, w, m.t.G.Ellipsis)))
		}
		return cut(out, maxLines, m)
	case len(a.Edits) > 0:
		var out []string
		if a.Path != "" {
			out = append(out, m.t.Faint.Render(cleanLine(a.Path)))
		}
		for _, e := range a.Edits {
			old := e.Old
			out = append(out, render.Diff(m.t, &old, e.New, w, 0)...)
		}
		return cut(out, maxLines, m)
	case a.Content != nil:
		out := []string{m.t.Faint.Render(cleanLine(a.Path) + " (the whole file)")}
		out = append(out, render.Diff(m.t, nil, *a.Content, w, 0)...)
		return cut(out, maxLines, m)
	}
	var pretty any
	if json.Unmarshal(raw, &pretty) == nil {
		if b, err := json.MarshalIndent(pretty, "", "  "); err == nil {
			raw = b
		}
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		out = append(out, m.t.Faint.Render(ansi.Truncate(cleanLine(l), w, m.t.G.Ellipsis)))
	}
	return cut(out, maxLines, m)
}

// permTitle is the title of the call a permission request is about,
// shown on one line.
func permTitle(p acp.RequestPermissionRequest) string {
	if p.ToolCall.Title != nil {
		return cleanLine(*p.ToolCall.Title)
	}
	return cleanLine(string(p.ToolCall.ToolCallID))
}

func cut(lines []string, n int, m *model) []string {
	if len(lines) <= n {
		return lines
	}
	more := len(lines) - n + 1
	return append(lines[:n-1], m.t.Faint.Render(fmt.Sprintf("%s %d more lines", m.t.G.Ellipsis, more)))
}
