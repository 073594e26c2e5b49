package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/acpclient"
	"zot.dev/zot/internal/tui/render"
)

// segKind is what a segment of a turn's output is.
type segKind int

const (
	segText     segKind = iota // the answer, Markdown
	segThinking                // the model's reasoning, shown collapsed
	segTool                    // a tool call
	segUser                    // a prompt of the history replayed on load
)

// segment is one piece of a turn's output, in the order it came. A text
// segment's complete lines go to the scrollback as they come; any other
// segment goes whole once it is done.
type segment struct {
	kind  segKind
	done  bool
	lines []string        // text: rendered lines not printed yet
	part  strings.Builder // text, thinking, user: the incomplete last line / all of it
	// shown is part rendered for the live region, at width shownW;
	// stale says part changed since.
	shown  []string
	shownW int
	stale  bool
	chars  int // thinking: its length

	tool *toolCall
}

// toolCall is what the client knows of one call.
type toolCall struct {
	id     string
	title  string
	kind   acp.ToolKind
	status acp.ToolCallStatus
	input  json.RawMessage
	output string
	diffs  []acp.Diff
	images []string    // a line for each image of its result
	child  *childBlock // a task call: what its sub-agent did (child.go)
}

// last returns the open segment of kind, or a new one after closing the
// open one of another kind.
func (m *model) last(kind segKind) *segment {
	if n := len(m.segs); n > 0 {
		s := m.segs[n-1]
		if s.kind == kind && !s.done && kind != segTool {
			return s
		}
		m.finish(s)
	}
	s := &segment{kind: kind}
	m.segs = append(m.segs, s)
	return s
}

// finish marks a text, thinking or user segment done.
func (m *model) finish(s *segment) {
	if s.kind == segTool || s.done {
		return
	}
	s.done = true
	if s.kind == segText && s.part.Len() > 0 {
		s.lines = append(s.lines, m.md.Line(s.part.String())...)
		s.part.Reset()
		s.stale, s.shown = true, nil
	}
}

// endSegments closes every segment (the turn ended): a tool call that
// never finished is shown as it stands.
func (m *model) endSegments() {
	for _, s := range m.segs {
		m.finish(s)
		if s.kind == segTool {
			s.done = true
		}
	}
	if m.md.InCode() {
		// A code block the answer left open is closed for the next one.
		m.md.Line("```")
	}
}

// drain moves what is finished at the head of segs to toPrint.
func (m *model) drain() {
	for len(m.segs) > 0 {
		s := m.segs[0]
		if s.kind == segText {
			m.toPrint = append(m.toPrint, s.lines...)
			s.lines = nil
		}
		if !s.done {
			return
		}
		if s.kind != segText {
			m.toPrint = append(m.toPrint, m.segmentLines(s, false)...)
		} else {
			m.toPrint = append(m.toPrint, "")
		}
		m.segs = m.segs[1:]
	}
}

// event handles what the agent sent.
func (m *model) event(ev acpclient.Event) tea.Cmd {
	return tea.Batch(m.apply(ev), m.flush())
}

// apply takes in what the agent sent; the caller flushes. It returns a
// command of its own (a toast's timer), or nil.
func (m *model) apply(ev acpclient.Event) tea.Cmd {
	switch e := ev.(type) {
	case acpclient.Text:
		if e.SessionID == m.sessionID || m.sessionID == "" {
			if e.Thought {
				m.thought(e.Text)
			} else {
				m.text(clean(e.Text))
			}
		}
	case acpclient.Update:
		if e.SessionID == m.sessionID || m.sessionID == "" {
			m.update(e.Update)
			if e.Update.CurrentModeUpdate != nil {
				return m.keep()
			}
		}
	case acpclient.ConfigUpdate:
		m.options = e.Options
		return m.keep()
	case acpclient.Permission:
		m.perms = append(m.perms, e)
		if len(m.perms) == 1 {
			m.permSel = 0
		}
	case acpclient.Notice:
		if e.SessionID == nil || *e.SessionID == m.sessionID {
			return m.toasts.Add(e.ZotNotifyNotification)
		}
	case acpclient.PanelOpened:
		if e.SessionID == m.sessionID {
			m.panel.Open(e.Panel)
			m.in.Blur()
		}
	case acpclient.PanelRendered:
		if e.SessionID == m.sessionID {
			m.panel.Render(e.Panel)
		}
	case acpclient.PanelClosed:
		if e.SessionID == m.sessionID && m.panel.Closed(e.PanelID) {
			m.in.Focus()
		}
	}
	return nil
}

// update applies one session/update.
func (m *model) update(u acp.SessionUpdate) {
	switch {
	case u.AgentMessageChunk != nil:
		if img := u.AgentMessageChunk.Content.Image; img != nil {
			m.text("\n" + imageLine(img) + "\n")
			return
		}
		t := u.AgentMessageChunk.Content.Text
		if t == nil {
			return
		}
		// zot's server says what a command's text is for.
		z, _ := u.AgentMessageChunk.Meta["zot"].(map[string]any)
		switch action, _ := z["action"].(string); action {
		case "insert":
			m.in.Insert(clean(t.Text))
			m.pop.SetInput(m.in.Text())
		case "display":
			m.endSegments()
			m.drain()
			for _, l := range strings.Split(strings.TrimRight(clean(t.Text), "\n"), "\n") {
				m.toPrint = append(m.toPrint, m.t.Faint.Render(l))
			}
			m.toPrint = append(m.toPrint, "")
		default:
			m.text(clean(t.Text))
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			m.thought(t.Text)
		}
	case u.UserMessageChunk != nil:
		if img := u.UserMessageChunk.Content.Image; img != nil {
			m.endSegments()
			m.drain()
			m.userLines(imageLine(img))
		}
		if t := u.UserMessageChunk.Content.Text; t != nil {
			m.endSegments()
			m.drain()
			m.userLines(clean(t.Text))
		}
	case u.ToolCall != nil:
		tc := &toolCall{id: string(u.ToolCall.ToolCallID), title: clean(u.ToolCall.Title), kind: u.ToolCall.Kind,
			status: u.ToolCall.Status, input: u.ToolCall.RawInput}
		m.last(segTool).tool = tc
		m.lastTool = tc
		m.applyContent(tc, u.ToolCall.Content)
		if tc.status == acp.ToolCallStatusCompleted || tc.status == acp.ToolCallStatusFailed {
			m.segs[len(m.segs)-1].done = true
		}
	case u.ToolCallUpdate != nil:
		up := u.ToolCallUpdate
		s := m.toolSeg(string(up.ToolCallID))
		if s == nil {
			return
		}
		tc := s.tool
		if up.Title != nil {
			tc.title = clean(*up.Title)
		}
		if up.Status != "" {
			tc.status = up.Status
		}
		if up.RawInput != nil {
			tc.input = up.RawInput
		}
		// zot's server sends a running call's new output in
		// _meta.zot.output; the result's content replaces it.
		if z, ok := up.Meta["zot"].(map[string]any); ok {
			if out, ok := z["output"].(string); ok {
				tc.output = lastLines(tc.output+clean(out), 200)
			}
			if ce, ok := z["childEvent"].(map[string]any); ok {
				m.childEvent(tc, ce) // child.go
			}
		}
		m.applyContent(tc, up.Content)
		if tc.status == acp.ToolCallStatusCompleted || tc.status == acp.ToolCallStatusFailed {
			s.done = true
		}
	case u.CurrentModeUpdate != nil:
		m.mode = string(u.CurrentModeUpdate.CurrentModeID)
	case u.AvailableCommandsUpdate != nil:
		m.commands = u.AvailableCommandsUpdate.AvailableCommands
		m.pop.SetItems(m.commandItems())
	case u.SessionInfoUpdate != nil:
		if u.SessionInfoUpdate.Title != nil {
			m.title = cleanLine(*u.SessionInfoUpdate.Title)
		}
	case u.UsageUpdate != nil:
		uu := *u.UsageUpdate
		m.usage = &uu
	case u.Plan != nil:
		m.plan(u.Plan)
	}
}

// thought adds a chunk of the model's reasoning.
func (m *model) thought(chunk string) {
	s := m.last(segThinking)
	s.chars += utf8.RuneCountInString(chunk)
	s.part.WriteString(clean(chunk))
}

// text adds a chunk of the answer: its complete lines are rendered now.
func (m *model) text(chunk string) {
	s := m.last(segText)
	for {
		i := strings.IndexByte(chunk, '\n')
		if i < 0 {
			s.part.WriteString(chunk)
			s.stale = true
			return
		}
		s.part.WriteString(chunk[:i])
		s.lines = append(s.lines, m.md.Line(s.part.String())...)
		s.part.Reset()
		s.stale = true
		chunk = chunk[i+1:]
	}
}

// partial is the incomplete last line of a text segment rendered for
// the live region: rendered again only when it changed (or the width),
// so however many frames draw it, each change costs one render.
func (m *model) partial(s *segment) []string {
	if s.part.Len() == 0 {
		return nil
	}
	if s.stale || s.shownW != m.width {
		src := s.part.String()
		// The live region shows at most three quarters of a screen: a
		// line longer than a screenful is rendered from a word near its
		// tail (how it wraps above that is not seen; the finished line
		// is rendered whole).
		if limit := m.width * m.height; len(src) > limit {
			cut := len(src) - limit
			if i := strings.IndexByte(src[cut:], ' '); i >= 0 {
				cut += i + 1
			}
			src = strings.ToValidUTF8(src[cut:], "")
		}
		s.shown, s.shownW, s.stale = m.md.Partial(src), m.width, false
	}
	return s.shown
}

// plan prints the agent's plan.
func (m *model) plan(p *acp.Plan) {
	m.endSegments()
	m.drain()
	m.toPrint = append(m.toPrint, m.t.Bold.Render("Plan"))
	for _, e := range p.Entries {
		mark := m.t.G.Pending
		switch e.Status {
		case acp.PlanEntryStatusInProgress:
			mark = m.t.G.Running
		case acp.PlanEntryStatusCompleted:
			mark = m.t.G.Done
		}
		m.toPrint = append(m.toPrint, "  "+mark+" "+cleanLine(e.Content))
	}
	m.toPrint = append(m.toPrint, "")
}

func (m *model) toolSeg(id string) *segment {
	for _, s := range m.segs {
		if s.kind == segTool && s.tool != nil && s.tool.id == id {
			return s
		}
	}
	return nil
}

// applyContent keeps a call's output and diffs.
func (m *model) applyContent(tc *toolCall, content []acp.ToolCallContent) {
	if tc.child != nil {
		return // a task call draws its sub-agent instead (child.go)
	}
	for _, c := range content {
		switch {
		case c.Diff != nil:
			tc.diffs = append(tc.diffs, *c.Diff)
		case c.Content != nil && c.Content.Content.Text != nil:
			tc.output = clean(c.Content.Content.Text.Text)
		case c.Content != nil && c.Content.Content.Image != nil:
			tc.images = append(tc.images, imageLine(c.Content.Content.Image))
		}
	}
}

// maxToolLines is how many lines of a call's output are shown.
const maxToolLines = 10

// segmentLines draws a segment that is not text: live (in the live
// region, with a spinner) or for the scrollback.
func (m *model) segmentLines(s *segment, live bool) []string {
	g := m.t.G
	switch s.kind {
	case segThinking:
		label := fmt.Sprintf("%s thinking (%s chars)", g.Thinking, thousands(s.chars))
		if live {
			label = fmt.Sprintf("%s thinking%s (%s chars)", g.Thinking, g.Ellipsis, thousands(s.chars))
		}
		return []string{m.t.Thinking.Render(label), ""}
	case segUser:
		return nil
	case segTool:
		if s.tool != nil && s.tool.child != nil {
			return m.childLines(s.tool, live) // child.go
		}
		return m.toolLines(s.tool, live)
	}
	return nil
}

// toolLines draws a call: its status, its title, its output (the last
// lines) or its diffs.
func (m *model) toolLines(tc *toolCall, live bool) []string {
	if tc == nil {
		return nil
	}
	g := m.t.G
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
	title := ansi.Truncate(tc.title, m.width-4, g.Ellipsis)
	out := []string{st.Render(mark) + " " + m.t.Bold.Render(title)}
	gut := m.t.Faint.Render(g.Gutter) + " "
	for _, d := range tc.diffs {
		add, del := render.DiffStat(d.OldText, d.NewText)
		out = append(out, gut+m.t.Faint.Render(fmt.Sprintf("%s +%d -%d", cleanLine(d.Path), add, del)))
		for _, l := range render.Diff(m.t, d.OldText, d.NewText, m.width-4, 40) {
			out = append(out, gut+l)
		}
	}
	if tc.output != "" && (len(tc.diffs) == 0 || tc.status == acp.ToolCallStatusFailed) {
		lines := strings.Split(strings.TrimRight(ansi.Strip(tc.output), "\n"), "\n")
		if live && len(lines) > maxToolLines {
			// While it runs: the newest lines.
			lines = lines[len(lines)-maxToolLines:]
		} else if len(lines) > maxToolLines {
			more := len(lines) - maxToolLines
			lines = append(lines[:maxToolLines-1], fmt.Sprintf("%s %d more lines (ctrl+o)", g.Ellipsis, more+1))
		}
		for _, l := range lines {
			l = strings.ReplaceAll(strings.ReplaceAll(l, "\t", "    "), "\r", "")
			l = ansi.Truncate(l, m.width-4, g.Ellipsis)
			if tc.status == acp.ToolCallStatusFailed {
				out = append(out, gut+m.t.Error.Render(l))
			} else {
				out = append(out, gut+m.t.Faint.Render(l))
			}
		}
	}
	for _, img := range tc.images {
		out = append(out, gut+m.t.Faint.Render(ansi.Truncate(img, m.width-4, g.Ellipsis)))
	}
	return append(out, "")
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	i := len(s)
	for range n + 1 {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
