package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
)

// childLive is how many steps of a running sub-agent are shown.
const childLive = 5

// childAnswerLines is how many lines of a sub-agent's answer stay in the
// scrollback once it is done.
const childAnswerLines = 3

// childBlock is what a task call shows of its sub-agent (zot's
// _meta.zot.childEvent on the call's updates): expanded while it runs,
// its newest steps; collapsed once it is done, to the number of steps and
// the first lines of its answer.
type childBlock struct {
	agent  string
	steps  []string // a line per tool call of the sub-agent (and of its own sub-agents)
	answer string   // its last message's text
	ending string   // why it did not finish, if so
}

// childEvent takes in one event of a task call's sub-agent.
func (m *model) childEvent(tc *toolCall, ce map[string]any) {
	if tc.child == nil {
		tc.child = &childBlock{}
	}
	b := tc.child
	if a, ok := ce["agent"].(string); ok && b.agent == "" {
		b.agent = cleanLine(a)
	}
	depth := 0
	if p, ok := ce["path"].([]any); ok {
		depth = len(p)
	}
	raw, _ := json.Marshal(ce["event"])
	var ev struct {
		Type    string          `json:"type"`
		Name    string          `json:"name"`
		Args    json.RawMessage `json:"args"`
		Stop    string          `json:"stop"`
		Message string          `json:"message"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	switch ev.Type {
	case "tool_call":
		b.steps = append(b.steps, strings.Repeat("  ", depth)+stepTitle(ev.Name, ev.Args))
	case "assistant_message":
		if depth > 0 {
			return // a sub-agent's own sub-agent: its answer reaches its parent
		}
		var text strings.Builder
		for _, c := range ev.Content {
			if c.Type == "text" {
				text.WriteString(c.Text)
			}
		}
		if t := strings.TrimSpace(text.String()); t != "" {
			b.answer = clean(t)
		}
	case "error":
		if depth == 0 {
			b.ending = cleanLine(ev.Message)
		}
	case "turn_end":
		if depth == 0 && ev.Stop == "aborted" {
			b.ending = "aborted"
		}
	}
}

// stepTitle is a sub-agent's tool call in one line: the tool and its
// command, path or pattern.
func stepTitle(name string, args json.RawMessage) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	for _, k := range []string{"command", "path", "pattern", "description"} {
		if v, ok := a[k].(string); ok && v != "" {
			v, _, _ = strings.Cut(v, "\n")
			return cleanLine(name + " " + v)
		}
	}
	return cleanLine(name)
}

// childLines draws a task call and its sub-agent.
func (m *model) childLines(tc *toolCall, live bool) []string {
	g := m.t.G
	b := tc.child
	mark, st := g.Pending, m.t.Faint
	switch tc.status {
	case acp.ToolCallStatusInProgress:
		mark, st = g.Running, m.t.Accent
		if live {
			mark = g.Spinner[m.spin%len(g.Spinner)]
		}
	case acp.ToolCallStatusCompleted:
		mark, st = g.Done, m.t.OK
	case acp.ToolCallStatusFailed:
		mark, st = g.Failed, m.t.Error
	}
	note := fmt.Sprintf(" · %d steps", len(b.steps))
	if len(b.steps) == 1 {
		note = " · 1 step"
	}
	if b.agent != "" {
		note = " · " + b.agent + note
	}
	head := st.Render(mark) + " " + m.t.Bold.Render(ansi.Truncate(tc.title, m.width-4-len(note), g.Ellipsis)) + m.t.Faint.Render(note)
	out := []string{head}
	gut := m.t.Faint.Render(g.Gutter) + " "
	line := func(s string) string { return gut + ansi.Truncate(s, m.width-4, g.Ellipsis) }
	done := tc.status == acp.ToolCallStatusCompleted || tc.status == acp.ToolCallStatusFailed
	if !done {
		steps := b.steps
		if n := len(steps) - childLive; n > 0 {
			out = append(out, line(m.t.Faint.Render(fmt.Sprintf("%s %d earlier steps", g.Ellipsis, n))))
			steps = steps[n:]
		}
		for _, s := range steps {
			out = append(out, line(m.t.Faint.Render(s)))
		}
		return out
	}
	// Done: collapsed to the answer's first lines, or why it ended.
	if b.ending != "" {
		out = append(out, line(m.t.Error.Render(b.ending)))
	}
	if b.answer != "" {
		lines := strings.Split(b.answer, "\n")
		if len(lines) > childAnswerLines {
			more := len(lines) - childAnswerLines
			lines = append(lines[:childAnswerLines], m.t.Faint.Render(fmt.Sprintf("%s %d more lines", g.Ellipsis, more)))
		}
		for _, l := range lines {
			out = append(out, line(l))
		}
	}
	return out
}

// childBody is a task call unfolded (ctrl+o): every step of its
// sub-agent, then its whole answer.
func (m *model) childBody(b *childBlock, width int) []string {
	var out []string
	wrap := func(l string) []string {
		l = strings.ReplaceAll(strings.ReplaceAll(l, "\t", "    "), "\r", "")
		return strings.Split(ansi.Hardwrap(l, max(width, 1), true), "\n")
	}
	for _, s := range b.steps {
		for _, row := range wrap("→ " + s) {
			out = append(out, m.t.Faint.Render(row))
		}
	}
	if b.ending != "" {
		out = append(out, m.t.Error.Render(b.ending))
	}
	if b.answer != "" {
		if len(out) > 0 {
			out = append(out, "")
		}
		for _, l := range strings.Split(b.answer, "\n") {
			out = append(out, wrap(l)...)
		}
	}
	if len(out) == 0 {
		out = append(out, m.t.Faint.Render("(no steps yet)"))
	}
	return out
}
