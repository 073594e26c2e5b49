package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/tui/acpclient"
	"zot.dev/zot/internal/tui/editor"
	"zot.dev/zot/internal/tui/panel"
	"zot.dev/zot/internal/tui/popup"
	"zot.dev/zot/internal/tui/render"
	"zot.dev/zot/internal/tui/style"
	"zot.dev/zot/internal/tui/toast"
)

// Messages the model gets besides the terminal's.
type (
	// eventMsg is what the agent sent.
	eventMsg struct{ ev acpclient.Event }
	// readyMsg: the session is open.
	readyMsg struct {
		s   acpclient.Session
		err error
	}
	// listedMsg: the sessions a picker offers.
	listedMsg struct {
		list []acp.SessionInfo
		err  error
	}
	// promptDoneMsg: the agent answered session/prompt.
	promptDoneMsg struct {
		stop acp.StopReason
		err  error
	}
	// printedMsg: the lines handed to the terminal are in its scrollback.
	printedMsg struct{}
	// framedMsg: the terminal has drawn the first frame.
	framedMsg struct{}
	// tickMsg moves the spinner.
	tickMsg struct{}
	// errMsg is a failed call, shown as a line.
	errMsg struct{ err error }
	// optionsMsg: the config options after a change.
	optionsMsg struct{ opts []acpclient.ConfigOption }
	// restoredMsg: a call that put a session back in its remembered
	// model (opts: the options now) or mode was answered.
	restoredMsg struct {
		opts []acpclient.ConfigOption
		err  error
	}
	// lostMsg: the agent ended the connection.
	lostMsg struct{ err error }
)

// doubleCtrlC is how soon a second Ctrl-C must follow the first to exit
// during a turn.
const doubleCtrlC = time.Second

// model is the client's state. Its methods run on the program's one
// goroutine; calls to the agent run in commands.
type model struct {
	ctx   context.Context // Run's: the calls to the agent end with it
	o     Options
	c     *acpclient.Client
	box   *inbox // the agent's events, queued
	t     *style.Theme
	fatal error // why the client ended, when it failed

	width, height int

	// The session.
	sessionID string
	modes     []acp.SessionMode
	mode      string
	options   []acpclient.ConfigOption
	commands  []acp.AvailableCommand
	title     string
	usage     *acp.UsageUpdate
	ready     bool
	// kept is the model and mode last recorded in (or recalled from)
	// Options.Sessions for this session; restoring counts the calls
	// under way that put them back, during which nothing is recorded.
	kept      [2]string
	restoring int

	// The turn.
	busy      bool
	started   time.Time
	spin      int
	ticking   bool
	cancelled bool
	queued    []string // prompts typed while a turn runs, sent in order after it

	// What is shown: finished lines go to the scrollback through
	// toPrint; segs is the turn's output not printed yet.
	md       *render.Markdown
	segs     []*segment
	toPrint  []string
	inFlight []string // handed to the terminal, not yet confirmed
	// inFlightShown: inFlight stays in the live region until confirmed.
	inFlightShown bool
	// drawn is the height of the tallest live region drawn since the
	// last print began (one of them is on the screen).
	drawn    int
	printing bool
	// firstFrame is closed once the terminal has the first frame; until
	// framed, nothing is printed.
	firstFrame <-chan struct{}
	framed     bool
	blank      bool // the last line printed was blank (or nothing was printed)

	in        *editor.Model
	pop       *popup.Commands
	lastCtrlC time.Time
	status    string // a one-line hint over the footer ("press Ctrl-C again to exit")

	perms   []acpclient.Permission // waiting for an answer, the first shown
	permSel int
	panel   panel.Model
	toasts  toast.Model
	picker  *picker
	quit    bool

	// lastTool is the turn's last tool call, which Ctrl-O expands
	// (expand, nil while collapsed).
	lastTool *toolCall
	expand   *expanded
}

func newModel(ctx context.Context, o Options) *model {
	t := style.New(o.Theme)
	m := &model{ctx: ctx, o: o, t: t, width: 80, height: 24, blank: true, framed: true}
	if o.Width > 0 {
		m.width, m.height = o.Width, o.Height
	}
	m.md = render.NewMarkdown(t, m.width)
	hist, err := editor.OpenHistory(o.HistoryFile, 0)
	if err != nil {
		hist, _ = editor.OpenHistory("", 0)
	}
	m.in = editor.New(editor.Options{Prompt: t.G.Prompt + " ", Width: m.width, History: hist, WorkDir: o.CWD,
		Placeholder: "Ask anything · / for commands · @ for files"})
	if o.Prompt != "" {
		m.in.SetValue(o.Prompt)
	}
	m.pop = popup.NewCommands(slices.Clone(localCommands))
	m.pop.ASCII = o.Theme.ASCII
	m.panel.ASCII = o.Theme.ASCII
	m.toasts.ASCII = o.Theme.ASCII
	return m
}

func (m *model) Init() tea.Cmd {
	m.toPrint = append(m.toPrint, m.o.Intro...)
	if m.framed {
		return tea.Batch(m.flush(), m.open())
	}
	first, ctx := m.firstFrame, m.ctx
	framed := func() tea.Msg {
		select {
		case <-first:
		case <-ctx.Done():
			return nil
		}
		// The frame follows the program's first output (its queries)
		// in the same flush: two frames' time for it to be written.
		t := time.NewTimer(2 * frameTime)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return framedMsg{}
	}
	return tea.Batch(framed, m.open())
}

// open opens the session Options.Start names.
func (m *model) open() tea.Cmd {
	c, o := m.c, m.o
	return func() tea.Msg {
		ctx := m.ctx
		if _, err := c.Initialize(ctx, o.Version); err != nil {
			return readyMsg{err: fmt.Errorf("the agent did not answer initialize: %w", err)}
		}
		switch {
		case o.Start.SessionID != "":
			s, err := c.LoadSession(ctx, o.Start.SessionID, o.CWD)
			return readyMsg{s: s, err: err}
		case o.Start.Resume:
			cwd := o.CWD
			if o.Attach {
				cwd = ""
			}
			list, err := c.ListSessions(ctx, cwd)
			return listedMsg{list: list, err: err}
		case o.Start.Continue:
			list, err := c.ListSessions(ctx, o.CWD)
			if err != nil {
				return readyMsg{err: err}
			}
			if len(list) > 0 {
				s, err := c.LoadSession(ctx, string(newest(list).SessionID), o.CWD)
				return readyMsg{s: s, err: err}
			}
		}
		s, err := c.NewSession(ctx, o.CWD)
		return readyMsg{s: s, err: err}
	}
}

// newest is the session updated last.
func newest(list []acp.SessionInfo) acp.SessionInfo {
	best := list[0]
	for _, s := range list[1:] {
		if s.UpdatedAt != nil && (best.UpdatedAt == nil || *s.UpdatedAt > *best.UpdatedAt) {
			best = s
		}
	}
	return best
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 5)
		m.md.SetWidth(m.width - 2)
		m.in.SetWidth(m.width)
		m.panel.MaxLines = max(m.height/2, 3)
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		return m, m.paste(msg)
	case editor.SubmitMsg:
		m.pop.SetInput("")
		return m, m.send(msg.Text)
	case eventMsg:
		return m, m.event(msg.ev)
	case eventsMsg:
		// Everything queued by now, then one flush.
		var cmds []tea.Cmd
		for _, ev := range m.box.take() {
			if cmd := m.apply(ev); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
		return m, tea.Batch(append(cmds, m.flush())...)
	case readyMsg:
		if msg.err != nil {
			m.fatal = fmt.Errorf("opening the session: %s", errorText(msg.err))
			m.quit = true
			return m, m.leave()
		}
		m.setSession(msg.s)
		return m, tea.Batch(m.flush(), m.restore())
	case listedMsg:
		if msg.err != nil {
			m.fatal = fmt.Errorf("listing the sessions: %s", errorText(msg.err))
			m.quit = true
			return m, m.leave()
		}
		if len(msg.list) == 0 && !m.ready {
			m.note(m.t.Faint.Render("No earlier session here: a new one starts."))
			return m, tea.Batch(m.flush(), m.openNew())
		}
		m.picker = sessionPicker(msg.list, m.o.Attach, m.o.Theme.ASCII)
		m.in.Blur()
		return m, nil
	case promptDoneMsg:
		return m, m.turnDone(msg)
	case printedMsg:
		m.inFlight, m.printing = nil, false
		return m, m.flush()
	case framedMsg:
		m.framed = true
		return m, m.flush()
	case tickMsg:
		m.ticking = false
		if !m.busy {
			return m, nil
		}
		m.spin++
		return m, m.tick()
	case errMsg:
		m.note(m.t.Error.Render(m.t.G.Failed + " " + errorText(msg.err)))
		return m, m.flush()
	case lostMsg:
		if !m.quit {
			m.fatal = errors.New("the agent closed the connection")
			if msg.err != nil && !errors.Is(msg.err, io.EOF) {
				m.fatal = fmt.Errorf("the connection to the agent ended: %w", msg.err)
			}
		}
		return m, m.leave()
	case optionsMsg:
		if msg.opts != nil {
			m.options = msg.opts
		}
		return m, m.keep()
	case restoredMsg:
		m.restoring--
		if msg.opts != nil {
			m.options = msg.opts
		}
		if msg.err != nil {
			m.note(m.t.Error.Render(m.t.G.Failed + " " + errorText(msg.err)))
			return m, tea.Batch(m.flush(), m.keep())
		}
		return m, m.keep()
	}
	m.toasts.Update(msg)
	return m, nil
}

// paste goes where the keys go: the picker, the panel or the input.
func (m *model) paste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.picker != nil:
		m.picker.Update(msg)
		return nil
	case len(m.perms) > 0:
		return nil
	case m.panel.IsOpen():
		keys, _ := m.panel.Update(msg)
		return m.panelKeys(keys)
	}
	cmd := m.in.Update(msg)
	m.pop.SetInput(m.in.Text())
	return cmd
}

// openNew opens a new session (after a picker found none or was left).
func (m *model) openNew() tea.Cmd {
	c, cwd := m.c, m.o.CWD
	return func() tea.Msg {
		s, err := c.NewSession(m.ctx, cwd)
		return readyMsg{s: s, err: err}
	}
}

func (m *model) setSession(s acpclient.Session) {
	m.sessionID = s.ID
	m.lastTool, m.expand = nil, nil
	m.ready = true
	if s.Modes != nil {
		m.modes = s.Modes.AvailableModes
		m.mode = string(s.Modes.CurrentModeID)
	}
	if s.Options != nil {
		m.options = s.Options
	}
	m.endSegments()
}

// restore puts the session just opened in the mode remembered from the
// last run (Options.Mode, once) or the model and mode it had when last
// seen here (Options.Sessions).
func (m *model) restore() tea.Cmd {
	model, mode := "", m.o.Mode
	m.o.Mode = "" // once
	m.kept = [2]string{m.option("model"), m.mode}
	if s := m.o.Sessions; s != nil {
		rmodel, rmode := s.Recall(m.sessionID)
		if rmodel != "" {
			model, m.kept[0] = rmodel, rmodel
		}
		if rmode != "" {
			mode, m.kept[1] = rmode, rmode
		}
	}
	c, id := m.c, m.sessionID
	var cmds []tea.Cmd
	if model != "" && model != m.option("model") && m.offersModel(model) {
		m.restoring++
		cmds = append(cmds, func() tea.Msg {
			opts, err := c.SetConfigOption(m.ctx, id, "model", model)
			return restoredMsg{opts, err}
		})
	}
	if mode != "" && mode != m.mode && slices.ContainsFunc(m.modes, func(md acp.SessionMode) bool { return string(md.ID) == mode }) {
		m.restoring++
		cmds = append(cmds, func() tea.Msg {
			return restoredMsg{err: c.SetMode(m.ctx, id, mode)}
		})
	}
	return tea.Batch(cmds...)
}

// offersModel reports whether the session's model option offers id.
func (m *model) offersModel(id string) bool {
	for _, o := range m.options {
		if o.ID == "model" {
			return slices.ContainsFunc(o.Options, func(c acpclient.ConfigChoice) bool { return c.Value == id })
		}
	}
	return false
}

// keep records the session's model and mode in Options.Sessions when
// they changed. It writes at once, on the program's goroutine, so that
// two changes are recorded in the order they came (a change is rare and
// its record small).
func (m *model) keep() tea.Cmd {
	s := m.o.Sessions
	if s == nil || m.sessionID == "" || m.restoring > 0 {
		return nil
	}
	now := [2]string{m.option("model"), m.mode}
	if now == m.kept {
		return nil
	}
	m.kept = now
	if err := s.Keep(m.sessionID, now[0], now[1]); err != nil {
		m.note(m.t.Faint.Render("The model and mode of this session could not be kept: " + errorText(err)))
		return m.flush()
	}
	return nil
}

// leave ends the program, printing what is left first.
func (m *model) leave() tea.Cmd {
	m.quit = true
	m.endSegments()
	m.drain()
	if len(m.toPrint) > 0 || m.printing {
		return m.flush()
	}
	return tea.Quit
}

// tick schedules the spinner's next frame.
func (m *model) tick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// send sends text as a prompt (or runs a command of the client's own).
func (m *model) send(text string) tea.Cmd {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if cmd, ok := m.localCommand(text); ok {
		return cmd
	}
	if !m.ready {
		m.note(m.t.Faint.Render("The session is not open yet."))
		return m.flush()
	}
	if m.busy {
		m.queued = append(m.queued, text)
		return nil
	}
	return m.submit(text)
}

// submit starts a turn with text.
func (m *model) submit(text string) tea.Cmd {
	m.endSegments()
	m.userLines(text)
	m.busy, m.cancelled, m.started = true, false, time.Now()
	c, id := m.c, m.sessionID
	run := func() tea.Msg {
		stop, err := c.Prompt(m.ctx, id, text)
		return promptDoneMsg{stop: stop, err: err}
	}
	return tea.Batch(m.flush(), run, m.tick())
}

// userLines prints what the person sent.
func (m *model) userLines(text string) {
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		lead := m.t.User.Render(m.t.G.Prompt) + " "
		if i > 0 {
			lead = "  "
		}
		m.toPrint = append(m.toPrint, lead+m.t.User.Render(l))
	}
	m.toPrint = append(m.toPrint, "")
}

// turnDone ends the turn the agent answered.
func (m *model) turnDone(msg promptDoneMsg) tea.Cmd {
	m.busy = false
	m.endSegments()
	switch {
	case msg.err != nil:
		m.note(m.t.Error.Render(m.t.G.Failed + " " + errorText(msg.err)))
	case msg.stop == acp.StopReasonCancelled:
		m.note(m.t.Warn.Render("Interrupted."))
	case msg.stop == acp.StopReasonMaxTokens:
		m.note(m.t.Warn.Render("The answer was cut at the model's output limit."))
	case msg.stop == acp.StopReasonMaxTurnRequests:
		m.note(m.t.Warn.Render("The turn stopped at its step limit (--max-steps)."))
	case msg.stop == acp.StopReasonRefusal:
		m.note(m.t.Warn.Render("The model refused."))
	}
	// A request the turn left waiting is answered cancelled.
	for _, p := range m.perms {
		p.Answer("")
	}
	m.perms = nil
	cmds := []tea.Cmd{m.flush()}
	if len(m.queued) > 0 {
		next := m.queued[0]
		m.queued = m.queued[1:]
		cmds = append(cmds, m.submit(next))
	}
	return tea.Batch(cmds...)
}

// errorText is an error from the agent as a person reads it: its
// message, without the JSON-RPC code.
func errorText(err error) string {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return clean(je.Message)
	}
	return clean(err.Error())
}

// note prints a line of the client's own after what is printed now.
func (m *model) note(line string) {
	m.endSegments()
	m.drain()
	m.toPrint = append(m.toPrint, line, "")
}

// flush hands the lines waiting to the terminal, one batch at a time
// (a batch's printedMsg lets the next one go, so the order holds).
func (m *model) flush() tea.Cmd {
	m.drain()
	if !m.framed {
		return nil
	}
	if m.printing || len(m.toPrint) == 0 {
		if m.quit && !m.printing {
			return tea.Quit
		}
		return nil
	}
	// One blank line between blocks, never two.
	m.inFlight = m.inFlight[:0]
	for _, l := range m.toPrint {
		if l == "" && m.blank {
			continue
		}
		m.blank = l == ""
		m.inFlight = append(m.inFlight, l)
	}
	m.toPrint = nil
	if len(m.inFlight) == 0 {
		return nil
	}
	m.printing = true
	printed := func() tea.Msg { return printedMsg{} }
	// The renderer inserts lines above the live region it last drew by
	// scrolling the screen; when that region and the lines together are
	// taller than the screen, the region's top scrolls into the
	// scrollback between the lines and the cursor cannot climb back
	// (lines land out of order, the end of a tall block is lost). So no
	// region is ever drawn taller than the screen less a chunk (screen),
	// the lines go a chunk at a time, and a line wider than the screen
	// is cut into rows first, so that a chunk's height is its length.
	rows := make([]string, 0, len(m.inFlight))
	for _, l := range m.inFlight {
		if ansi.StringWidth(l) > m.width {
			rows = append(rows, strings.Split(ansi.Hardwrap(l, m.width, true), "\n")...)
			continue
		}
		rows = append(rows, l)
	}
	tall := m.drawn
	m.drawn = 0
	if len(rows) <= smallPrint && tall+len(rows) < m.height {
		// Shown in the live region until the terminal has them above it.
		m.inFlightShown = true
		return tea.Sequence(printLines(rows), printed)
	}
	m.inFlightShown = false
	// A tall approval or panel under the region can make it taller
	// than screen allows: the chunks are smaller then.
	step := max(min(printChunk(m.height), m.height-1-tall), 1)
	var cmds []tea.Cmd
	for i := 0; i < len(rows); i += step {
		cmds = append(cmds, printLines(rows[i:min(i+step, len(rows))]))
	}
	return tea.Sequence(append(cmds, printed)...)
}

// printLines inserts lines above the live region. The renderer skips an
// empty text, so a lone blank line is written as a space.
func printLines(lines []string) tea.Cmd {
	text := strings.Join(lines, "\n")
	if text == "" {
		text = " "
	}
	return tea.Println(text)
}

// printChunk is how many lines are inserted above the live region at a
// time on a screen of height rows: a quarter of it, the live region
// being held to the rest.
func printChunk(height int) int { return max(height/4, 1) }

// smallPrint is the most lines printed while still shown in the live
// region.
const smallPrint = 3

// key handles a key press.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.status = ""
	}
	switch {
	case m.picker != nil:
		return m.pickerKey(k)
	case s == "ctrl+c" && !m.panel.IsOpen():
		return m.ctrlC()
	case s == "ctrl+o" && !m.panel.IsOpen():
		return m.toggleExpand()
	case len(m.perms) > 0:
		return m.permKey(k)
	case m.expand != nil && !m.panel.IsOpen() && !m.pop.Open() && !m.in.Completing() && m.expandKey(k):
		return nil
	case m.panel.IsOpen():
		keys, closed := m.panel.Update(k)
		if closed {
			return m.closePanel()
		}
		return m.panelKeys(keys)
	case m.pop.Open():
		switch act, it := m.pop.Update(k); act {
		case popup.Moved, popup.Cancel:
			return nil
		case popup.Complete:
			m.in.SetValue(it.Name + " ")
			return nil
		case popup.Choose:
			m.in.Reset()
			m.pop.SetInput("")
			return m.send(it.Name)
		}
	}
	switch s {
	case "ctrl+d":
		if m.in.Empty() {
			return m.leave()
		}
	case "esc":
		if m.in.Completing() {
			break
		}
		if m.busy {
			return m.cancel()
		}
		m.toasts.Clear()
		return nil
	case "shift+tab":
		return m.cycleMode()
	}
	cmd := m.in.Update(k)
	m.pop.SetInput(m.in.Text())
	return cmd
}

// ctrlC aborts the turn; a second one within doubleCtrlC, or one while
// nothing runs, exits.
func (m *model) ctrlC() tea.Cmd {
	now := time.Now()
	if !m.busy || now.Sub(m.lastCtrlC) < doubleCtrlC {
		return m.leave()
	}
	m.lastCtrlC = now
	m.status = "Press Ctrl-C again to exit."
	return m.cancel()
}

// cancel asks the agent to end the turn; the waiting approvals are
// answered cancelled.
func (m *model) cancel() tea.Cmd {
	if m.cancelled || !m.busy {
		return nil
	}
	m.cancelled = true
	for _, p := range m.perms {
		p.Answer("")
	}
	m.perms = nil
	// An interrupt stops what was typed ahead too.
	if n := len(m.queued); n > 0 {
		m.queued = nil
		m.status = fmt.Sprintf("Interrupted: %d queued prompt(s) dropped. ", n) + m.status
	}
	c, id := m.c, m.sessionID
	return func() tea.Msg {
		if err := c.Cancel(m.ctx, id); err != nil {
			return errMsg{err}
		}
		return nil
	}
}

// cycleMode moves to the next permission mode.
func (m *model) cycleMode() tea.Cmd {
	if len(m.modes) == 0 || m.sessionID == "" {
		return nil
	}
	i := slices.IndexFunc(m.modes, func(md acp.SessionMode) bool { return string(md.ID) == m.mode })
	next := string(m.modes[(i+1)%len(m.modes)].ID)
	return m.setMode(next)
}

func (m *model) setMode(mode string) tea.Cmd {
	c, id := m.c, m.sessionID
	settings := m.o.Settings
	return func() tea.Msg {
		if err := c.SetMode(m.ctx, id, mode); err != nil {
			return errMsg{err}
		}
		if settings != nil {
			_ = settings.Remember("", mode)
		}
		return nil
	}
}
