package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/acpclient"
	"zot.dev/zot/internal/tui/panel"
	"zot.dev/zot/internal/tui/popup"
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
		m.picker = modelPicker(m.options, m.option("model"), m.o.Theme.ASCII)
		if m.picker == nil {
			return nil, false
		}
		m.in.Blur()
		return nil, true
	case "steer":
		if arg == "" || !m.ready {
			return nil, false
		}
		if !m.busy {
			return m.submit(arg), true // nothing to steer: a prompt
		}
		m.userLines(arg)
		c, id := m.c, m.sessionID
		return tea.Batch(m.flush(), func() tea.Msg {
			if err := c.Steer(m.ctx, id, arg); err != nil {
				return errMsg{err: err}
			}
			return nil
		}), true
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
			list, err := c.ListSessions(m.ctx, cwd)
			return listedMsg{list: list, err: err}
		}, true
	}
	return nil, false
}

// localCommands are the commands the client answers itself, as the
// popup lists them.
var localCommands = []popup.Item{
	{Name: "/help", Description: "keys and commands"},
	{Name: "/model", Description: "pick or set the model"},
	{Name: "/mode", Description: "next or named permission mode (shift+tab)"},
	{Name: "/sessions", Description: "open another session"},
	{Name: "/exit", Description: "leave"},
}

// zotCommands are zot's own commands; the others the agent lists are
// its extensions'.
var zotCommands = []string{"help", "compact", "clear", "model", "mode", "reload", "undo"}

// commandItems are the popup's rows: the client's commands, zot's, then
// the extensions' under their divider.
func (m *model) commandItems() []popup.Item {
	items := slices.Clone(localCommands)
	var ext []popup.Item
	for _, c := range m.commands {
		name := "/" + c.Name
		if slices.ContainsFunc(items, func(it popup.Item) bool { return it.Name == name }) {
			continue
		}
		it := popup.Item{Name: name, Description: c.Description}
		if slices.Contains(zotCommands, c.Name) {
			items = append(items, it)
		} else {
			it.Group = "extensions"
			ext = append(ext, it)
		}
	}
	return append(items, ext...)
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
		opts, err := c.SetConfigOption(m.ctx, sid, "model", id)
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
		"  /steer text      while a turn runs: tell the model now, at its next step",
		"  alt+enter        new line (shift+enter, ctrl+j too)",
		"  up / down        earlier prompts of this folder (on the first / last line)",
		"  @path            complete a file of the working directory",
		"  /                the commands; tab completes, enter runs",
		"  esc              interrupt the turn; close a panel or picker",
		"  ctrl+c           interrupt the turn; twice within 1 s, or when idle, exit",
		"  ctrl+d           exit (on an empty input)",
		"  ctrl+o           the last tool call's whole output; again (or esc) folds it",
		"  shift+tab        next permission mode",
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
		out = append(out, fmt.Sprintf("  /%-15s %s", cleanLine(c.Name), f(ansi.Truncate(cleanLine(c.Description), max(m.width-20, 10), m.t.G.Ellipsis))))
	}
	// A row wider than the screen goes on under its description.
	const indent = 19
	var rows []string
	for _, l := range out {
		if ansi.StringWidth(l) <= m.width || m.width <= indent+10 || !strings.HasPrefix(l, "  ") {
			rows = append(rows, l)
			continue
		}
		head, desc := ansi.Cut(l, 0, indent), ansi.Cut(l, indent, ansi.StringWidth(l))
		for i, w := range strings.Split(ansi.Wrap(desc, m.width-indent, ""), "\n") {
			if i > 0 {
				head = strings.Repeat(" ", indent)
			}
			rows = append(rows, head+w)
		}
	}
	return append(rows, "")
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
	title := permTitle(p.Request)
	st := m.t.OK
	if o.Kind == acp.PermissionOptionKindRejectOnce || o.Kind == acp.PermissionOptionKindRejectAlways {
		st = m.t.Error
	}
	m.toPrint = append(m.toPrint, st.Render(cleanLine(o.Name))+m.t.Faint.Render(": "+ansi.Truncate(title, m.width-20, m.t.G.Ellipsis)))
	return m.flush()
}

func optionIndex(opts []acp.PermissionOption, kind acp.PermissionOptionKind) int {
	return slices.IndexFunc(opts, func(o acp.PermissionOption) bool { return o.Kind == kind })
}

// panelKeys sends the keys the panel's extension gets, in order.
func (m *model) panelKeys(keys []panel.Key) tea.Cmd {
	if len(keys) == 0 {
		return nil
	}
	c, sid := m.c, m.sessionID
	return func() tea.Msg {
		for _, k := range keys {
			if err := c.PanelKey(m.ctx, sid, k.PanelID, k.Key, k.Text); err != nil {
				return errMsg{err}
			}
		}
		return nil
	}
}

// closePanel tells the extension its panel was closed (esc, ctrl+c).
func (m *model) closePanel() tea.Cmd {
	m.in.Focus()
	c, sid, id := m.c, m.sessionID, m.panel.ID()
	return func() tea.Msg {
		if err := c.PanelClose(m.ctx, sid, id); err != nil {
			return errMsg{err}
		}
		return nil
	}
}

// picker is a popup.Picker and what choosing a row does.
type picker struct {
	*popup.Picker
	pick func(m *model, it popup.Item) tea.Cmd
}

func sessionPicker(list []acp.SessionInfo, attach bool, ascii bool) *picker {
	items := make([]popup.Item, 0, len(list)+1)
	items = append(items, popup.Item{Name: "(new session)", Description: "start a new session here", Value: ""})
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
		items = append(items, popup.Item{Name: title, Description: detail, Value: string(s.SessionID)})
	}
	p := &picker{Picker: popup.NewPicker("Open a session", items), pick: func(m *model, it popup.Item) tea.Cmd {
		id, _ := it.Value.(string)
		m.endSegments()
		if id == "" {
			if m.ready {
				m.note(m.t.Faint.Render("New session"))
			}
			return tea.Batch(m.flush(), m.openNew())
		}
		m.note(m.t.Faint.Render("Session " + it.Name))
		c, cwd := m.c, m.o.CWD
		return func() tea.Msg {
			s, err := c.LoadSession(m.ctx, id, cwd)
			return readyMsg{s: s, err: err}
		}
	}}
	p.EmptyText = "no sessions in this folder"
	p.ASCII = ascii
	return p
}

func modelPicker(opts []acpclient.ConfigOption, current string, ascii bool) *picker {
	for _, o := range opts {
		if o.ID != "model" {
			continue
		}
		items := make([]popup.Item, 0, len(o.Options))
		for _, c := range o.Options {
			items = append(items, popup.Item{Name: c.Value, Description: c.Description, Value: c.Value})
		}
		p := &picker{Picker: popup.NewPicker("Switch model", items), pick: func(m *model, it popup.Item) tea.Cmd {
			id, _ := it.Value.(string)
			return m.setModel(id)
		}}
		p.Select(func(it popup.Item) bool { return it.Value == current })
		p.ASCII = ascii
		return p
	}
	return nil
}

// pickerKey hands a key to the picker and acts on what it answers.
func (m *model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch act, it := p.Update(k); act {
	case popup.Choose:
		m.picker = nil
		m.in.Focus()
		return p.pick(m, it)
	case popup.Cancel:
		m.picker = nil
		m.in.Focus()
		if !m.ready {
			return m.openNew()
		}
	}
	return nil
}
