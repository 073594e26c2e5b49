package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/acpclient"
)

// localCommand runs the commands the client answers itself: /exit and
// /quit, /help, /mode, /model and /sessions. Every other line goes to
// the agent, which runs zot's and the extensions' commands.
func (m *model) localCommand(text string) (tea.Cmd, bool) {
	if !strings.HasPrefix(text, "/") {
		return nil, false
	}
	name, arg, _ := strings.Cut(strings.TrimSpace(text[1:]), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "exit", "quit":
		return m.leave(), true
	case "help":
		if arg != "" {
			return nil, false
		}
		m.toPrint = append(m.toPrint, m.helpLines()...)
		return m.flush(), true
	case "mode":
		if !m.ready {
			return nil, false
		}
		if arg == "" {
			return m.cycleMode(), true
		}
		if !slices.ContainsFunc(m.modes, func(md acp.SessionMode) bool { return string(md.ID) == arg }) {
			m.note(m.t.Error.Render(fmt.Sprintf("%s no mode %q: %s", m.t.G.Failed, arg, m.modeNames())))
			return m.flush(), true
		}
		return m.setMode(arg), true
	case "model":
		if !m.ready {
			return nil, false
		}
		if arg != "" {
			return m.setModel(arg), true
		}
		m.picker = modelPicker(m.options, m.option("model"))
		if m.picker == nil {
			return nil, false
		}
		return nil, true
	case "sessions", "resume":
		if m.busy {
			m.note(m.t.Warn.Render("A turn is running: /sessions after it ends."))
			return m.flush(), true
		}
		c, cwd := m.c, m.o.CWD
		if m.o.Attach {
			cwd = ""
		}
		return func() tea.Msg {
			list, err := c.ListSessions(context.Background(), cwd)
			return listedMsg{list: list, err: err}
		}, true
	}
	return nil, false
}

func (m *model) modeNames() string {
	names := make([]string, len(m.modes))
	for i, md := range m.modes {
		names[i] = string(md.ID)
	}
	return strings.Join(names, ", ")
}

// setModel switches the session's model.
func (m *model) setModel(id string) tea.Cmd {
	c, sid, settings := m.c, m.sessionID, m.o.Settings
	return func() tea.Msg {
		opts, err := c.SetConfigOption(context.Background(), sid, "model", id)
		if err != nil {
			return errMsg{err}
		}
		if settings != nil {
			_ = settings.Remember(id, "")
		}
		return optionsMsg{opts}
	}
}

// helpLines are /help: the keys and every command.
func (m *model) helpLines() []string {
	b, f := m.t.Bold.Render, m.t.Faint.Render
	out := []string{b("Keys"),
		"  enter            send (while a turn runs: queued after it)",
		"  alt+enter        new line (shift+enter, ctrl+j too)",
		"  esc              interrupt the turn; close a panel or picker",
		"  ctrl+c           interrupt the turn; twice within 1 s, or when idle, exit",
		"  ctrl+d           exit (on an empty input)",
		"  shift+tab        next permission mode",
		"  ctrl+l           redraw",
		"",
		b("Commands"),
		"  /help            this list",
		"  /model [id]      pick or set the model",
		"  /mode [mode]     next or named permission mode (" + m.modeNames() + ")",
		"  /sessions        open another session of this folder",
		"  /exit            leave",
	}
	for _, c := range m.commands {
		if slices.Contains([]string{"help", "model", "mode", "exit", "quit", "sessions"}, c.Name) {
			continue
		}
		out = append(out, fmt.Sprintf("  /%-15s %s", c.Name, f(ansi.Truncate(c.Description, max(m.width-20, 10), m.t.G.Ellipsis))))
	}
	return append(out, "")
}

// permKey answers the approval shown.
func (m *model) permKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.perms[0]
	opts := p.Request.Options
	choose := -1
	switch s := k.String(); s {
	case "up", "k":
		m.permSel = (m.permSel + len(opts) - 1) % max(len(opts), 1)
	case "down", "j", "tab":
		m.permSel = (m.permSel + 1) % max(len(opts), 1)
	case "enter":
		choose = m.permSel
	case "y":
		choose = optionIndex(opts, acp.PermissionOptionKindAllowOnce)
	case "n", "esc":
		choose = optionIndex(opts, acp.PermissionOptionKindRejectOnce)
	default:
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
			choose = int(s[0] - '1')
		}
	}
	if choose < 0 || choose >= len(opts) {
		return nil
	}
	o := opts[choose]
	p.Answer(string(o.OptionID))
	m.perms = m.perms[1:]
	m.permSel = 0
	title := string(p.Request.ToolCall.ToolCallID)
	if p.Request.ToolCall.Title != nil {
		title = *p.Request.ToolCall.Title
	}
	st := m.t.OK
	if o.Kind == acp.PermissionOptionKindRejectOnce || o.Kind == acp.PermissionOptionKindRejectAlways {
		st = m.t.Error
	}
	m.toPrint = append(m.toPrint, st.Render(o.Name)+m.t.Faint.Render(": "+ansi.Truncate(title, m.width-20, m.t.G.Ellipsis)))
	return m.flush()
}

func optionIndex(opts []acp.PermissionOption, kind acp.PermissionOptionKind) int {
	return slices.IndexFunc(opts, func(o acp.PermissionOption) bool { return o.Kind == kind })
}

// panelKeys maps the terminal's keys to a panel's (seed 001's names).
var panelKeys = map[string]acp.PanelKey{
	"up": acp.PanelKeyUp, "down": acp.PanelKeyDown, "left": acp.PanelKeyLeft, "right": acp.PanelKeyRight,
	"enter": acp.PanelKeyEnter, "tab": acp.PanelKeyTab, "pgup": acp.PanelKeyPageup, "pgdown": acp.PanelKeyPagedown,
	"home": acp.PanelKeyHome, "end": acp.PanelKeyEnd, "backspace": acp.PanelKeyBackspace, "delete": acp.PanelKeyDelete,
}

// panelKey sends a key to the open panel; esc closes it.
func (m *model) panelKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.panel
	c, sid := m.c, m.sessionID
	if k.String() == "esc" {
		m.panel = nil
		return func() tea.Msg {
			if err := c.PanelClose(context.Background(), sid, p.PanelID); err != nil {
				return errMsg{err}
			}
			return nil
		}
	}
	key, ok := panelKeys[k.String()]
	text := ""
	if !ok {
		if k.Text == "" || k.Mod&^1 != 0 {
			return nil
		}
		key, text = acp.PanelKeyRune, k.Text
	}
	return func() tea.Msg {
		if err := c.PanelKey(context.Background(), sid, p.PanelID, key, text); err != nil {
			return errMsg{err}
		}
		return nil
	}
}

// picker is a list to choose one row from: the sessions, the models.
type picker struct {
	title string
	rows  []pickRow
	sel   int
	pick  func(m *model, row pickRow) tea.Cmd
}

type pickRow struct {
	label, detail, value string
}

func sessionPicker(list []acp.SessionInfo, attach bool) *picker {
	p := &picker{title: "Sessions", pick: func(m *model, r pickRow) tea.Cmd {
		m.endSegments()
		m.note(m.t.Faint.Render("Session " + r.value))
		c, cwd := m.c, m.o.CWD
		return func() tea.Msg {
			s, err := c.LoadSession(context.Background(), r.value, cwd)
			return readyMsg{s: s, err: err}
		}
	}}
	for _, s := range list {
		title := "(untitled)"
		if s.Title != nil && *s.Title != "" {
			title = *s.Title
		}
		when := ""
		if s.UpdatedAt != nil {
			when = strings.Replace(strings.TrimSuffix(*s.UpdatedAt, "Z"), "T", " ", 1)
			if len(when) > 16 {
				when = when[:16]
			}
		}
		detail := when
		if attach {
			detail += "  " + s.CWD
		}
		p.rows = append(p.rows, pickRow{label: title, detail: detail, value: string(s.SessionID)})
	}
	return p
}

func modelPicker(opts []acpclient.ConfigOption, current string) *picker {
	for _, o := range opts {
		if o.ID != "model" {
			continue
		}
		p := &picker{title: "Model", pick: func(m *model, r pickRow) tea.Cmd { return m.setModel(r.value) }}
		for i, c := range o.Options {
			p.rows = append(p.rows, pickRow{label: c.Value, detail: c.Description, value: c.Value})
			if c.Value == current {
				p.sel = i
			}
		}
		return p
	}
	return nil
}

func (m *model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch k.String() {
	case "up", "ctrl+p":
		p.sel = max(p.sel-1, 0)
	case "down", "ctrl+n":
		p.sel = min(p.sel+1, len(p.rows)-1)
	case "pgup":
		p.sel = max(p.sel-10, 0)
	case "pgdown":
		p.sel = min(p.sel+10, len(p.rows)-1)
	case "enter":
		m.picker = nil
		if len(p.rows) == 0 {
			return nil
		}
		return p.pick(m, p.rows[p.sel])
	case "esc":
		m.picker = nil
		if !m.ready {
			return m.openNew()
		}
	}
	return nil
}

// lines draws the picker: the rows around the chosen one.
func (p *picker) lines(m *model) []string {
	g := m.t.G
	out := []string{m.t.Accent.Render(p.title) + m.t.Faint.Render("  ↑/↓ enter · esc")}
	if g.Arrow == "->" {
		out[0] = m.t.Accent.Render(p.title) + m.t.Faint.Render("  up/down enter · esc")
	}
	show := max(min(len(p.rows), m.height-6), 1)
	first := min(max(p.sel-show/2, 0), max(len(p.rows)-show, 0))
	for i := first; i < min(first+show, len(p.rows)); i++ {
		r := p.rows[i]
		mark := "  "
		label := r.label
		if i == p.sel {
			mark = m.t.Accent.Render(g.Arrow) + " "
			label = m.t.Bold.Render(label)
		}
		line := mark + label
		if r.detail != "" {
			line += "  " + m.t.Faint.Render(r.detail)
		}
		out = append(out, ansi.Truncate(line, m.width, g.Ellipsis))
	}
	if len(p.rows) == 0 {
		out = append(out, m.t.Faint.Render("  (none)"))
	}
	return out
}
