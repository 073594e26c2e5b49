package exthost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// Defaults of the durations of a Config left zero.
const (
	// DefaultStartTimeout bounds an extension's start, from its process
	// starting to its hello: long enough for `go run .` on a cold build
	// cache of a small machine.
	DefaultStartTimeout     = 30 * time.Second
	DefaultReadyTimeout     = 5 * time.Second
	DefaultReadyIdle        = 250 * time.Millisecond
	DefaultInterceptTimeout = 5 * time.Second
	DefaultToolTimeout      = 60 * time.Second
	DefaultCommandTimeout   = 30 * time.Second
	DefaultShutdownGrace    = 2 * time.Second
	DefaultTermGrace        = 1 * time.Second
	// DefaultMaxFrameBytes bounds one frame an extension writes; a longer
	// one is logged and skipped.
	DefaultMaxFrameBytes = 64 << 20
)

// Session is what the host needs of the session it attaches extensions
// to; *engine.Session has it.
type Session interface {
	Tools() *agent.ToolSet
	Interceptors() *agent.Chain
	Observe(fn func(wire.Event)) (stop func())
	Provider() string
	Model() string
	CWD() string
}

// Config configures a Manager. A zero duration takes its default.
type Config struct {
	// Discovery says where extensions are found; with nothing set, no
	// extension loads.
	Discovery
	// Version is zot's version, told to extensions in hello_ack.
	Version string
	// LogDir gets each extension's log, ext-<name>.log: its stderr and
	// the host's notes about it, kept under boundlog.FileCap with one .1
	// backup. Empty discards them.
	LogDir string
	// Log gets one line for each problem worth a person's attention: a
	// manifest that cannot be used, a failed handshake, a crash. Nil
	// discards them.
	Log io.Writer
	// Notify receives what extensions push at any time: notices, panel
	// redraws and closes, and the host's own error notices (a crash). It
	// is called from the host's goroutines and must not block. Nil drops
	// them.
	Notify func(Notice)

	// StartTimeout bounds the wait for an extension's hello after it was
	// started (an extension's manifest may ask for longer with
	// start_timeout_ms); one that misses it is killed and reported. With
	// ReadyTimeout it bounds how long the first prompt waits for the
	// extensions. Default 30 s.
	StartTimeout time.Duration
	// StartTimeoutName is how the user sets StartTimeout, named in the
	// error of an extension that missed it. Default "--ext-start-timeout".
	StartTimeoutName string
	// ReadyTimeout bounds the wait for ready after hello; an extension
	// that misses it goes on with what it registered. One whose hello
	// promised ready (sends_ready) has until its start timeout, counted
	// from its start, and at least ReadyTimeout after hello. Default 5 s.
	ReadyTimeout time.Duration
	// ReadyIdle is how long an extension that did not promise ready may
	// be quiet after hello before it is taken as ready without sending
	// ready. Default 250 ms.
	ReadyIdle time.Duration
	// InterceptTimeout bounds one event_intercept. Default 5 s.
	InterceptTimeout time.Duration
	// ToolTimeout bounds one tool_call of a tool that sets no timeout of
	// its own. Default 60 s.
	ToolTimeout time.Duration
	// CommandTimeout bounds one command_invoked. Default 30 s.
	CommandTimeout time.Duration
	// ShutdownGrace is how long an extension has to exit after shutdown
	// before SIGTERM; TermGrace how long after SIGTERM before SIGKILL.
	// Defaults 2 s and 1 s.
	ShutdownGrace, TermGrace time.Duration
	// MaxFrameBytes bounds one frame an extension writes. Default 64 MiB.
	MaxFrameBytes int
}

func (c *Config) defaults() {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&c.StartTimeout, DefaultStartTimeout)
	if c.StartTimeoutName == "" {
		c.StartTimeoutName = "--ext-start-timeout"
	}
	set(&c.ReadyTimeout, DefaultReadyTimeout)
	set(&c.ReadyIdle, DefaultReadyIdle)
	set(&c.InterceptTimeout, DefaultInterceptTimeout)
	set(&c.ToolTimeout, DefaultToolTimeout)
	set(&c.CommandTimeout, DefaultCommandTimeout)
	set(&c.ShutdownGrace, DefaultShutdownGrace)
	set(&c.TermGrace, DefaultTermGrace)
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// NoticeKind says what a Notice is.
type NoticeKind int

const (
	// NoticeNotify is a notice for the user (an extension's notify, or the
	// host's report of a crash): Level and Message.
	NoticeNotify NoticeKind = iota
	// NoticePanelRender is a fresh frame of a panel: Panel.
	NoticePanelRender
	// NoticePanelClose says the extension closed a panel: Panel.ID.
	NoticePanelClose
)

// Notice is something an extension pushed for the user.
type Notice struct {
	Extension string
	Kind      NoticeKind
	Level     extwire.NotifyLevel
	Message   string
	Panel     extwire.Panel
	// Logged says the host wrote the notice to Config.Log already (its
	// own report of a failed start or a crash): a door that writes
	// notices to the same place leaves it out.
	Logged bool
	// Source, when set, says the notice is not an extension's: "trust"
	// for the project's extensions left out of a folder that is not
	// trusted (Extension is then the same text).
	Source string
}

// SourceTrust is the Source of a notice about a folder that is not
// trusted.
const SourceTrust = "trust"

// TrustNotice is the notice that tells the user what a refusal to trust
// a folder left out; it was written to the log already.
func TrustNotice(d trust.Decision) Notice {
	return Notice{Extension: SourceTrust, Source: SourceTrust, Kind: NoticeNotify, Level: extwire.NotifyLevelWarn, Message: d.Message(), Logged: true}
}

// Errors of the host's calls.
var (
	// ErrUnknownCommand: no running extension offers the command.
	ErrUnknownCommand = wire.Sentinel(wire.CodeNotFound, "no extension offers this command")
	// ErrUnknownPanel: no running extension has a panel of that id open.
	ErrUnknownPanel = wire.Sentinel(wire.CodeNotFound, "no extension has this panel open")
	// ErrNotReading: the extension has not read the frames sent to it
	// before (up to its backlog), so a key for its panel is not sent.
	ErrNotReading = errors.New("it does not read its input: the key was not sent")
	// ErrClosed: the host was closed.
	ErrClosed = errors.New("the extension host is closed")
)

// Order of the interceptors the host adds: the gate that waits for the
// extensions (at the start of each prompt) comes first; the extensions'
// own come in load order among the session's other guards (Order 0),
// before approval.
const orderGate = -1 << 30

// OrderReady is the Order of an interceptor that must run once the
// extensions are ready (or have failed, or their start timed out): any
// BeforeTurn runs after the gate, which waits for them at the start of
// the prompt; OrderReady puts it before every extension's.
const OrderReady = orderGate + 1

// Manager runs the extensions of one session. Its methods are safe for
// concurrent use.
type Manager struct {
	cfg  Config
	sess Session

	exts       atomic.Pointer[[]*ext] // the current set, in load order
	removeGate func()

	// reloading serialises Reload and Close.
	reloading sync.Mutex

	mu sync.Mutex
	// stopObserve takes the host's observer out of the session; it is
	// added only once an extension is found, so a session without any
	// pays nothing for each event.
	stopObserve func()
	started     time.Time // when the current set was started
	removes     []func()  // take the current set's interceptors out
	sources     []string  // the tool sources the host has set
	panels      map[string]*ext
	// launched is set once the extensions were started (see Launch).
	launched bool
	closed   bool
}

// Start finds the extensions cfg names and starts them, concurrently, for
// sess: New, then Launch.
func Start(sess Session, cfg Config) *Manager {
	h := New(sess, cfg)
	h.Launch()
	return h
}

// New attaches a host to sess without starting any extension yet: Launch
// does, and so does anything that needs them (a prompt, a command,
// listing them), so that a door can answer its first command before the
// extensions compete with it for the machine.
func New(sess Session, cfg Config) *Manager {
	cfg.defaults()
	h := &Manager{cfg: cfg, sess: sess, panels: map[string]*ext{}}
	h.exts.Store(new([]*ext))
	// The gate runs as a prompt starts, before its first turn_start:
	// the extensions it starts (or waits for) are in the chain and
	// observe the session by then, so the prompt's first step reaches
	// their interceptors and observers like every later one.
	h.removeGate = sess.Interceptors().Add(agent.Interceptor{
		Name:         "extensions starting",
		Order:        orderGate,
		Timeout:      -1, // awaitReady has its own bound
		BeforePrompt: h.awaitReady,
	})
	return h
}

// Launch finds the extensions and starts them, concurrently; it returns
// at once. They join the session as they become ready, and the first
// prompt waits for them (at most the handshake timeout). Only the first
// call does anything.
func (h *Manager) Launch() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.launched || h.closed {
		return
	}
	h.launched = true
	h.launchLocked()
}

// launchLocked discovers the extensions and starts them. The caller holds
// h.mu.
func (h *Manager) launchLocked() {
	found := Find(h.cfg.Discovery)
	specs, problems, notes := found.Specs, found.Problems, found.Notes
	if d := found.Untrusted; d != nil && h.cfg.Trust.FirstReport(*d) {
		n := TrustNotice(*d)
		fmt.Fprintf(h.cfg.Log, "zot: %s\n", n.Message)
		h.notify(n)
	}
	for _, p := range problems {
		fmt.Fprintf(h.cfg.Log, "zot: %s\n", p)
	}
	for _, n := range notes {
		fmt.Fprintf(h.cfg.Log, "zot: %s\n", n)
	}
	h.started = time.Now()
	if len(specs) == 0 {
		// Nothing to wait for: the gate leaves the chain, so that turns
		// of a session without extensions do not pass through the host.
		h.removeGate()
		h.exts.Store(new([]*ext))
		return
	}
	if h.stopObserve == nil {
		h.stopObserve = h.sess.Observe(h.observe)
	}
	list := make([]*ext, 0, len(specs))
	for i, s := range specs {
		e := newExt(h, s, i)
		list = append(list, e)
		// Reserve the extension's place among the tool sources now, so
		// that name conflicts go by load order, not by which extension
		// happened to be ready first.
		h.sess.Tools().Set(e.source(), nil)
		if !slices.Contains(h.sources, e.source()) {
			h.sources = append(h.sources, e.source())
		}
		h.removes = append(h.removes, h.sess.Interceptors().Add(e.interceptor()))
	}
	h.exts.Store(&list)
	for _, e := range list {
		go e.run()
	}
}

// current returns the current extensions in load order.
func (h *Manager) current() []*ext { return *h.exts.Load() }

// awaitReady waits until every current extension is ready or has failed,
// or until ctx ends. Each extension is failed or taken as ready at its
// own deadlines (its start timeout, then the ready timeout); the wait
// ends at the latest of them, and a little later, all the same.
func (h *Manager) awaitReady(ctx context.Context) {
	h.Launch()
	h.mu.Lock()
	longest := h.cfg.StartTimeout
	for _, e := range h.current() {
		longest = max(longest, e.startTimeout())
	}
	deadline := h.started.Add(longest + h.cfg.ReadyTimeout + time.Second)
	h.mu.Unlock()
	var timer *time.Timer
	for _, e := range h.current() {
		select {
		case <-e.readyCh:
			continue
		default:
		}
		if timer == nil {
			wait := time.Until(deadline)
			if wait <= 0 {
				return
			}
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-e.readyCh:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Starting reports whether an extension is yet to be started, or started
// and neither ready nor failed.
func (h *Manager) Starting() bool {
	h.mu.Lock()
	launched, closed := h.launched, h.closed
	h.mu.Unlock()
	if closed {
		return false
	}
	if !launched {
		return true
	}
	for _, e := range h.current() {
		select {
		case <-e.readyCh:
		default:
			return true
		}
	}
	return false
}

// WaitReady waits as every prompt does as it starts: until every
// extension is ready or has failed, or until ctx ends.
func (h *Manager) WaitReady(ctx context.Context) { h.awaitReady(ctx) }

// Info describes one extension.
type Info struct {
	Name, Version, Description string
	Origin                     Origin
	// Dir is the manifest's folder.
	Dir string
	// State is "starting", "ready", "failed" or "exited".
	State string
	// Error says why a failed or exited extension is not running.
	Error string
	// Tools and Commands name what it registered.
	Tools, Commands []string
}

// Extensions describes the current extensions in load order.
func (h *Manager) Extensions() []Info {
	h.Launch()
	var out []Info
	for _, e := range h.current() {
		out = append(out, e.info())
	}
	return out
}

// Command is a slash command an extension offers.
type Command struct {
	Name, Description string
	// Extension is the name of the extension that offers it.
	Extension string
}

// Commands lists the commands of the ready extensions, in load order; of
// two commands with one name, the extension loaded first keeps it.
func (h *Manager) Commands() []Command {
	h.Launch()
	var out []Command
	seen := map[string]bool{}
	for _, e := range h.current() {
		for _, c := range e.commandList() {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	return out
}

// RunCommand invokes the slash command name with args (the rest of the
// command line) and returns the extension's answer. It starts the
// extensions if nothing did and waits for them first, as a prompt does. A panel the answer
// opens is remembered, so PanelKey reaches its extension. The answer's
// action is the caller's to carry out: submit the prompt, show the text,
// open the panel.
func (h *Manager) RunCommand(ctx context.Context, name, args string) (Command, *extwire.CommandResponseFrame, error) {
	if h.isClosed() {
		return Command{}, nil, ErrClosed
	}
	h.awaitReady(ctx)
	for _, c := range h.Commands() {
		if c.Name != name {
			continue
		}
		e := h.byName(c.Extension)
		if e == nil {
			break
		}
		ans, err := e.request(ctx, h.cfg.CommandTimeout, func(id string) extwire.HostFrame {
			return &extwire.CommandInvokedFrame{ID: id, Name: name, Args: args}
		})
		if err != nil {
			return c, nil, fmt.Errorf("extension %s: command %s: %w", e.name, name, err)
		}
		r, ok := ans.(*extwire.CommandResponseFrame)
		if !ok {
			return c, nil, fmt.Errorf("extension %s answered command %s with a %s frame", e.name, name, ans.Type())
		}
		if r.Action == "" {
			r.Action = extwire.CommandActionNoop
		}
		if !slices.Contains(extwire.CommandActionValues, r.Action) {
			return c, nil, unknownActionError(e.name, name, r)
		}
		if r.Action == extwire.CommandActionOpenPanel && r.OpenPanel != nil {
			h.trackPanel(r.OpenPanel.ID, e)
		}
		return c, r, nil
	}
	return Command{}, nil, fmt.Errorf("%w: %q", ErrUnknownCommand, name)
}

// unknownActionError is the error of a command answered with an action
// the protocol does not have: the answer cannot be carried out, and a
// silent noop would hide the extension's mistake.
func unknownActionError(ext, name string, r *extwire.CommandResponseFrame) error {
	valid := make([]string, len(extwire.CommandActionValues))
	for i, a := range extwire.CommandActionValues {
		valid[i] = string(a)
	}
	err := fmt.Errorf("extension %s answered command %s with the action %q, which is not one of %s",
		ext, name, clip([]byte(r.Action), 64), strings.Join(valid, ", "))
	if r.Error != "" {
		err = fmt.Errorf("%w (its error: %s)", err, clip([]byte(r.Error), 200))
	}
	return err
}

// PanelKey sends a key to the extension whose panel panelID is open. It
// fails with ErrNotReading, the key not sent, when that extension has not
// read its backlog of frames.
func (h *Manager) PanelKey(panelID string, key extwire.KeyName, text string) error {
	e := h.panelOwner(panelID)
	if e == nil {
		return fmt.Errorf("%w: %q", ErrUnknownPanel, panelID)
	}
	return e.sendIfRoom(&extwire.PanelKeyFrame{PanelID: panelID, Key: key, Text: text})
}

// ClosePanel tells the extension whose panel panelID is open that the
// user closed it, forgets the panel, and returns the extension's name.
func (h *Manager) ClosePanel(panelID string) (string, error) {
	e := h.panelOwner(panelID)
	if e == nil {
		return "", fmt.Errorf("%w: %q", ErrUnknownPanel, panelID)
	}
	h.untrackPanel(panelID, e)
	return e.name, e.send(&extwire.HostPanelCloseFrame{PanelID: panelID})
}

func (h *Manager) trackPanel(id string, e *ext) {
	h.mu.Lock()
	h.panels[id] = e
	h.mu.Unlock()
}

// untrackPanel forgets panel id if e owns it.
func (h *Manager) untrackPanel(id string, e *ext) {
	h.mu.Lock()
	if h.panels[id] == e {
		delete(h.panels, id)
	}
	h.mu.Unlock()
}

func (h *Manager) panelOwner(id string) *ext {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.panels[id]
}

// forgetPanels drops the panels of e, which has stopped, and says they
// closed.
func (h *Manager) forgetPanels(e *ext) {
	var closed []string
	h.mu.Lock()
	for id, o := range h.panels {
		if o == e {
			delete(h.panels, id)
			closed = append(closed, id)
		}
	}
	h.mu.Unlock()
	slices.Sort(closed)
	for _, id := range closed {
		h.notify(Notice{Extension: e.name, Kind: NoticePanelClose, Panel: extwire.Panel{ID: id}})
	}
}

func (h *Manager) byName(name string) *ext {
	for _, e := range h.current() {
		if e.name == name {
			return e
		}
	}
	return nil
}

func (h *Manager) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// notify hands n to Config.Notify.
func (h *Manager) notify(n Notice) {
	if h.cfg.Notify != nil {
		h.cfg.Notify(n)
	}
}

// Reload stops every extension, finds them again (the same explicit
// paths, the folders as they are now) and starts them, then waits for
// their handshakes as a prompt would. The caller makes sure no prompt
// runs.
func (h *Manager) Reload(ctx context.Context) error {
	h.reloading.Lock()
	defer h.reloading.Unlock()
	if h.isClosed() {
		return ErrClosed
	}
	h.stopAll(ctx)
	h.mu.Lock()
	for _, src := range h.sources {
		h.sess.Tools().Remove(src)
	}
	h.sources = nil
	h.panels = map[string]*ext{}
	h.launched = true
	h.launchLocked()
	h.mu.Unlock()
	h.awaitReady(ctx)
	return ctx.Err()
}

// stopAll stops the current extensions, concurrently, and takes their
// interceptors out.
func (h *Manager) stopAll(ctx context.Context) {
	h.mu.Lock()
	removes := h.removes
	h.removes = nil
	h.mu.Unlock()
	for _, r := range removes {
		r()
	}
	var wg sync.WaitGroup
	for _, e := range h.current() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.stop(ctx)
		}()
	}
	wg.Wait()
	h.exts.Store(new([]*ext))
}

// Close stops every extension by the shutdown ladder, concurrently, and
// takes the host out of the session: its tools, interceptors and
// observer. When ctx ends first, what is left is killed. Close may be
// called more than once.
func (h *Manager) Close(ctx context.Context) error {
	h.reloading.Lock()
	defer h.reloading.Unlock()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	stopObserve := h.stopObserve
	h.stopObserve = nil
	h.mu.Unlock()
	if stopObserve != nil {
		stopObserve()
	}
	h.removeGate()
	h.stopAll(ctx)
	h.mu.Lock()
	for _, src := range h.sources {
		h.sess.Tools().Remove(src)
	}
	h.sources = nil
	h.mu.Unlock()
	return nil
}

// observe sends the session's lifecycle events to the extensions that
// subscribed to them. It runs on the goroutine that emits and never
// blocks.
func (h *Manager) observe(ev wire.Event) {
	list := h.current()
	if len(list) == 0 {
		return
	}
	f := eventFrame(ev)
	if f == nil {
		return
	}
	for _, e := range list {
		e.event(f)
	}
}

// eventFrame maps one of zot's events to the extension event it is, or
// nil.
func eventFrame(ev wire.Event) *extwire.EventFrame {
	switch e := ev.(type) {
	case *wire.TurnStartEvent:
		step := e.Step
		return &extwire.EventFrame{Event: extwire.EventNameTurnStart, Step: &step}
	case *wire.TurnEndEvent:
		return &extwire.EventFrame{Event: extwire.EventNameTurnEnd, Stop: string(e.Stop), Error: e.Error}
	case *wire.ToolCallEvent:
		return &extwire.EventFrame{Event: extwire.EventNameToolCall, ToolID: e.ID, ToolName: e.Name, ToolArgs: e.Args}
	case *wire.AssistantMessageEvent:
		return &extwire.EventFrame{Event: extwire.EventNameAssistantMessage, Text: wireText(e.Content)}
	}
	return nil
}

// wireText joins the text blocks of a message.
func wireText(blocks wire.ContentBlocks) string {
	var text string
	for _, b := range blocks {
		if t, ok := b.(*wire.TextBlock); ok {
			text += t.Text
		}
	}
	return text
}
