package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// A Session owns its extensions and its MCP servers (docs/extensions.md,
// docs/mcp.md): SessionConfig names them, NewSession attaches them, the
// session starts them (at once, or held back until Launch with
// SessionConfig.DeferStart), and Close stops them by their shutdown
// ladder. They belong to the session, not to the Host, because each
// session has its own working directory: an extension is told it in its
// hello_ack, the project's extensions and mcp.json are found under it, and
// whether that folder is trusted is decided for it. Every door reaches
// them through the same Session methods, and what they push (notices,
// panel redraws) leaves through the session's notices (SetNoticeSink),
// stamped in seq order with the session's other events.

// ExtensionConfig says which extensions (docs/extensions.md) a session
// runs. The zero value runs none: nothing is found implicitly, extensions
// load only from the folders named here.
type ExtensionConfig struct {
	// Paths are extension folders, or their extension.json files, loaded
	// first and in order; of two with one name, the first wins.
	Paths []string
	// Discover also loads the extensions of the project (CWD/.zot/
	// extensions) and, when Home is set, those of Home/extensions. The
	// project's run only in a folder the user trusts (`zot trust`, kept
	// in Home's trust store; without Home no folder is trusted) or with
	// TrustProject. The same rule decides the project's MCP servers
	// (MCPOptions.Discover).
	Discover bool
	// TrustProject runs the project's extensions and MCP servers whether
	// or not the folder is trusted, as --trust-project does.
	TrustProject bool
	// Home is a zot home directory: Discover loads Home/extensions (and
	// MCPOptions.Discover Home/mcp.json), its trust store decides which
	// folders are trusted, and each extension's stderr is appended to
	// Home/logs/ext-<name>.log. Empty: no user extensions, and the
	// extensions' stderr is dropped.
	Home string
	// OnEvent receives what extensions push at any time, outside any
	// prompt: *wire.ExtNotifyEvent (also zot's report of a crash, level
	// "error"), *wire.PanelRenderEvent and *wire.PanelCloseEvent,
	// stamped with the session's seq. It is called with the session's
	// stamping lock held and must not block. Nil drops them. (The Go SDK
	// calls it; the other doors take the session's notices through
	// SetNoticeSink.)
	OnEvent func(wire.Event)
	// HandshakeTimeout bounds an extension's start, to its hello (its
	// manifest's start_timeout_ms when that is longer); it also bounds
	// how long the first prompt waits for the extensions. 0 means 30 s.
	HandshakeTimeout time.Duration
	// HandshakeTimeoutName is how the user sets HandshakeTimeout, named
	// in the error of an extension that missed it; empty means
	// "ExtensionConfig.HandshakeTimeout".
	HandshakeTimeoutName string
}

// on reports whether the configuration can load any extension.
func (c ExtensionConfig) on() bool { return len(c.Paths) > 0 || c.Discover }

// hostConfig is the extension host's configuration for a session in cwd.
func (c ExtensionConfig) hostConfig(cwd string, gate *trust.Gate, p *plugins) exthost.Config {
	name := c.HandshakeTimeoutName
	if name == "" {
		name = "ExtensionConfig.HandshakeTimeout"
	}
	hc := exthost.Config{
		Discovery:        exthost.Discovery{Paths: c.Paths},
		Version:          buildinfo.Version(),
		Log:              p.log,
		StartTimeout:     c.HandshakeTimeout,
		StartTimeoutName: name,
		Notify:           p.extensionNotice,
	}
	if c.Home != "" {
		hc.LogDir = home.Home{Dir: c.Home}.Logs()
	}
	if c.Discover {
		hc.ProjectDir = filepath.Join(cwd, trust.ExtensionsDir)
		hc.Trust = gate
		if c.Home != "" {
			hc.GlobalDir = home.Home{Dir: c.Home}.Extensions()
		}
	}
	return hc
}

// plugins are a session's extensions and MCP servers, and the notices
// they push.
type plugins struct {
	sess       *Session
	extCfg     ExtensionConfig
	mcpCfg     MCPOptions
	deferStart bool
	log        io.Writer
	gate       *trust.Gate // decides the project's extensions and MCP servers; nil when neither is discovered

	notices notices

	reloading sync.Mutex // serialises ReloadExtensions

	mu       sync.Mutex
	ext      *exthost.Manager // nil while no extension was found
	mcp      *mcphost.Manager // nil until the first server is added
	launched bool             // Launch was called (or nothing is held back)
	stopped  bool
	changed  []changeFn      // OnExtensionsChanged
	missed   bool            // they changed while changed was empty
	next     uint64          // keys of changed
	tellOnce func()          // tells changed once the first set is ready
	untell   func()          // takes tellOnce's interceptor out
	ctx      context.Context // ends when the plugins stop; made with the first waiter
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the goroutines that wait for the extensions
}

// changeFn is one function OnExtensionsChanged registered.
type changeFn struct {
	key uint64
	fn  func()
}

// startPlugins attaches the extensions and MCP servers cfg names. It
// fails, attaching nothing, when an MCP server or file is not usable.
func (s *Session) startPlugins(cfg SessionConfig) error {
	p := &s.plug
	p.sess = s
	p.extCfg, p.mcpCfg, p.deferStart = cfg.Extensions, cfg.MCP, cfg.DeferStart
	p.log = writerOf(cfg.Log)
	p.notices.sess = s
	p.notices.onExt, p.notices.onMCP = cfg.Extensions.OnEvent, cfg.MCP.OnEvent
	p.launched = !cfg.DeferStart
	if cfg.Extensions.Discover || cfg.MCP.Discover {
		p.gate = &trust.Gate{All: cfg.Extensions.TrustProject}
		if h := cfg.Extensions.Home; h != "" {
			p.gate.Store = &trust.Store{File: home.Home{Dir: h}.TrustFile()}
		}
	}
	if err := p.startMCP(cfg.MCPServers); err != nil {
		p.stop(context.Background())
		return err
	}
	return p.startExtensions() // nothing has stopped them yet: never fails
}

// startExtensions attaches the extension host. Held back (DeferStart),
// the host is attached and finds its extensions at Launch; started at
// once, nothing is attached when no extension is found, so that a
// session without any costs nothing more. Once the plugins have stopped
// it attaches nothing and returns ErrClosed: what it started then would
// outlive the session.
func (p *plugins) startExtensions() error {
	c := p.extCfg
	if !c.on() {
		return nil
	}
	hc := c.hostConfig(p.sess.cwd, p.gate, p)
	if !p.deferStart && len(c.Paths) == 0 {
		if f := exthost.Find(hc.Discovery); len(f.Specs) == 0 && f.Untrusted == nil {
			return nil
		}
	}
	h := exthost.New(p.sess, hc)
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errors.Join(ErrClosed, h.Close(context.Background()))
	}
	p.ext = h
	p.mu.Unlock()
	p.watchReady(h)
	if p.deferStart {
		return nil
	}
	h.Launch()
	return nil
}

// watchReady tells OnExtensionsChanged once the extensions are ready,
// by whichever comes first: a goroutine that waits for them, or the
// first turn, which waits for them at the extensions' gate (so a door
// hears of their commands before the turn's answer).
func (p *plugins) watchReady(h *exthost.Manager) {
	var once sync.Once
	tell := func() { once.Do(p.extensionsChanged) }
	remove := p.sess.Interceptors().Add(agent.Interceptor{
		Name:       "extensions ready",
		Order:      exthost.OrderReady,
		Timeout:    -1, // it never blocks
		BeforeTurn: func(context.Context, int) agent.Verdict { tell(); return agent.Verdict{} },
	})
	p.mu.Lock()
	p.untell = remove
	if !p.deferStart {
		p.waitReadyLocked(h, tell)
	} else {
		p.tellOnce = tell
	}
	p.mu.Unlock()
}

// waitReadyLocked starts the goroutine that calls tell once h's
// extensions are ready. The caller holds p.mu.
func (p *plugins) waitReadyLocked(h *exthost.Manager, tell func()) {
	if p.stopped {
		return
	}
	if p.ctx == nil {
		p.ctx, p.cancel = context.WithCancel(context.Background())
	}
	ctx := p.ctx
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		h.WaitReady(ctx)
		if ctx.Err() == nil {
			tell()
		}
	}()
}

// extensionsChanged calls the functions OnExtensionsChanged registered.
func (p *plugins) extensionsChanged() {
	p.mu.Lock()
	list := slices.Clone(p.changed)
	stopped := p.stopped
	p.missed = len(list) == 0 && !stopped
	p.mu.Unlock()
	if stopped {
		return
	}
	for _, c := range list {
		c.fn()
	}
}

// host returns the extension host, nil when the session has none.
func (p *plugins) host() *exthost.Manager {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ext
}

// Launch starts the extensions and MCP servers held back by
// SessionConfig.DeferStart; anything that needs them (a prompt, a
// command, listing them) starts them too. Only the first call does
// anything.
func (s *Session) Launch() {
	p := &s.plug
	p.mu.Lock()
	if p.launched || p.stopped {
		p.mu.Unlock()
		return
	}
	p.launched = true
	h, m, tell := p.ext, p.mcp, p.tellOnce
	p.tellOnce = nil
	if h != nil && tell != nil {
		p.waitReadyLocked(h, tell)
	}
	p.mu.Unlock()
	if m != nil {
		m.Launch()
	}
	if h != nil {
		h.Launch()
	}
}

// OnExtensionsChanged registers fn, called when the session's extensions
// (and so their commands) change: once the first set is ready (at the
// latest as the first turn starts, before its first step), and after
// each ReloadExtensions; when they changed before any function was
// registered, fn is also called once before OnExtensionsChanged returns.
// fn runs on a goroutine of the session and must not block for long. It
// returns the function that unregisters fn.
func (s *Session) OnExtensionsChanged(fn func()) (stop func()) {
	p := &s.plug
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	key := p.next
	p.changed = append(p.changed, changeFn{key: key, fn: fn})
	missed := p.missed
	p.missed = false
	if missed {
		// They changed before anyone listened (an extension that was
		// ready before its door registered): fn hears of it now.
		p.mu.Unlock()
		fn()
		p.mu.Lock()
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.changed = slices.DeleteFunc(p.changed, func(c changeFn) bool { return c.key == key })
	}
}

// ExtensionsStarting reports whether an extension is yet to be started,
// or started and neither ready nor failed.
func (s *Session) ExtensionsStarting() bool {
	h := s.plug.host()
	return h != nil && h.Starting()
}

// WaitExtensions waits as every prompt does as it starts: until every
// extension is ready or has failed (at most their handshake timeout), or
// until ctx ends. It starts extensions held back.
func (s *Session) WaitExtensions(ctx context.Context) {
	if h := s.plug.host(); h != nil {
		h.WaitReady(ctx)
	}
}

// Extensions describes the session's extensions in load order, with
// their state (starting, ready, failed, exited).
func (s *Session) Extensions() []wire.ExtensionInfo {
	h := s.plug.host()
	if h == nil {
		return []wire.ExtensionInfo{}
	}
	return exthost.WireExtensions(h.Extensions())
}

// ExtensionCommands lists the slash commands of the ready extensions, in
// load order (of two with one name, the extension loaded first keeps
// it). It does not wait for extensions still starting: call
// WaitExtensions first for the list a prompt would see.
func (s *Session) ExtensionCommands() []wire.SlashCommand {
	h := s.plug.host()
	if h == nil {
		return []wire.SlashCommand{}
	}
	return exthost.WireCommands(h.Commands())
}

// CommandOutcome is what an extension's slash command answered.
type CommandOutcome struct {
	// Result is run_command's answer. For action "prompt", Text is the
	// prompt to submit (the door submits it and fills in Started, Queued
	// and Position); an empty prompt is already turned into a noop with
	// an error.
	Result wire.RunCommandResult
	// Event, when not nil, is the event that shows the answer (ext_display,
	// ext_insert, panel_open), not yet stamped: the door stamps it with
	// Notice after its answer, with its command's id as prompt_id.
	Event wire.Event
}

// Errors of the extension and MCP calls.
var (
	// ErrNotFound is returned (wrapped) for a slash command no extension
	// offers, a panel no extension has open, and an MCP server not of
	// the session: code not_found (errors.Is matches every not_found
	// *wire.Error).
	ErrNotFound error = &wire.Error{Code: wire.CodeNotFound, Message: "zot: not found"}
	// ErrExtension is returned (wrapped) when an extension failed to
	// answer: it crashed, did not answer in time, or answered with
	// something the protocol does not allow (code extension_error).
	ErrExtension error = &wire.Error{Code: wire.CodeExtensionError, Message: "zot: extension failed"}
	// ErrUnknownKey refuses a panel key that is not one of the
	// protocol's (extwire.KeyNameValues).
	ErrUnknownKey = wire.Sentinel(wire.CodeInvalidParams, "unknown panel key")
)

// RunExtensionCommand invokes an extension's slash command name with args
// (the rest of the command line) and returns its outcome. It waits for
// the extensions first, as a prompt does; a panel the answer opens is
// remembered, so PanelKey reaches its extension. It fails with an error
// wrapping ErrNotFound for a command no extension offers, ErrExtension
// when the extension fails, and ErrClosed once the session is closed.
func (s *Session) RunExtensionCommand(ctx context.Context, name, args string) (CommandOutcome, error) {
	h := s.plug.host()
	if h == nil {
		return CommandOutcome{}, &kindError{kind: ErrNotFound, err: fmt.Errorf("%w: %q", exthost.ErrUnknownCommand, name)}
	}
	c, r, err := h.RunCommand(ctx, name, args)
	if err != nil {
		return CommandOutcome{}, extError(err)
	}
	res, ev := exthost.Outcome(c, r)
	if res.Action == wire.CommandActionPrompt && res.Text == "" {
		res.Action = wire.CommandActionNoop
		if res.Error == "" {
			res.Error = "the extension's prompt is empty"
		}
	}
	return CommandOutcome{Result: res, Event: ev}, nil
}

// PanelKey sends a key ("up", "down", "enter", "esc", "rune" with text,
// …) to the extension whose panel panelID is open; the extension answers,
// if at all, with a panel_render or panel_close notice. It fails with an
// error wrapping ErrNotFound when no extension has that panel open, and
// with one wrapping ErrUnknownKey (invalid_params) for a key that is not
// one of the protocol's, which no extension is sent.
func (s *Session) PanelKey(panelID string, key extwire.KeyName, text string) error {
	if !slices.Contains(extwire.KeyNameValues, key) {
		return fmt.Errorf("%w %q: one of %s", ErrUnknownKey, key, keyNames)
	}
	h := s.plug.host()
	if h == nil {
		return &kindError{kind: ErrNotFound, err: fmt.Errorf("%w: %q", exthost.ErrUnknownPanel, panelID)}
	}
	return extError(h.PanelKey(panelID, key, text))
}

// ClosePanel closes an open extension panel, as a user would: its
// extension is told, and the name of that extension returned. It fails
// with an error wrapping ErrNotFound when no extension has that panel
// open.
func (s *Session) ClosePanel(panelID string) (extension string, err error) {
	h := s.plug.host()
	if h == nil {
		return "", &kindError{kind: ErrNotFound, err: fmt.Errorf("%w: %q", exthost.ErrUnknownPanel, panelID)}
	}
	owner, err := h.ClosePanel(panelID)
	return owner, extError(err)
}

// ReloadExtensions stops every extension, finds them again (the same
// paths, the folders as they are now) and starts them, and returns them
// once they are ready (or their handshake timeout has passed); then the
// OnExtensionsChanged functions are called. A session that found none
// looks again. It returns ErrBusy while work runs or waits, and ErrClosed
// once the session is closed or its extensions were stopped
// (StopExtensions).
func (s *Session) ReloadExtensions(ctx context.Context) ([]wire.ExtensionInfo, error) {
	p := &s.plug
	p.reloading.Lock() // one reload at a time: a session that found none makes one host
	defer p.reloading.Unlock()
	s.mu.Lock()
	err := s.idleLocked()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	h := p.host()
	if h == nil {
		if !p.extCfg.on() {
			return []wire.ExtensionInfo{}, nil
		}
		p.mu.Lock()
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			return nil, ErrClosed
		}
		// Only a session that starts its extensions at once can have
		// none attached: it looks again.
		if err := p.startExtensions(); err != nil {
			return nil, err
		}
		if h = p.host(); h == nil {
			p.extensionsChanged()
			return []wire.ExtensionInfo{}, nil
		}
		// Those found now are told as the first set is: once ready
		// (watchReady).
		h.WaitReady(ctx)
		return s.Extensions(), ctx.Err()
	} else if err := h.Reload(ctx); err != nil {
		return nil, extError(err)
	}
	p.extensionsChanged()
	return s.Extensions(), nil
}

// extError maps the extension host's errors to the engine's, keeping
// their text.
func extError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exthost.ErrUnknownCommand), errors.Is(err, exthost.ErrUnknownPanel):
		return &kindError{kind: ErrNotFound, err: err}
	case errors.Is(err, exthost.ErrClosed):
		return ErrClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &kindError{kind: ErrExtension, err: err}
}

// kindError is err, also matching kind with errors.Is: its text is
// err's.
type kindError struct{ kind, err error }

// keyNames lists the panel keys for an error message.
var keyNames = func() string {
	names := make([]string, len(extwire.KeyNameValues))
	for i, k := range extwire.KeyNameValues {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}()

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// extensionNotice hands on what an extension pushed, stamped.
func (p *plugins) extensionNotice(n exthost.Notice) {
	p.notices.push(n.Event(), n.Logged)
}

// StopTimeout bounds how long Close waits for a session's extensions and
// MCP servers to leave by their shutdown ladder; what is left then is
// killed.
const StopTimeout = 5 * time.Second

// StopExtensions stops the session's extensions and MCP servers by their
// shutdown ladder, all at once, and kills what is left when ctx ends.
// Close does it (within StopTimeout) if nothing did before; a door that
// must go sooner (a signal) calls it with a shorter bound.
func (s *Session) StopExtensions(ctx context.Context) error {
	return s.plug.stop(ctx)
}

// stop stops the extensions and MCP servers; only the first call does
// anything.
func (p *plugins) stop(ctx context.Context) error {
	p.mu.Lock()
	if p.stopped || p.sess == nil {
		p.stopped = true
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	if p.cancel != nil {
		p.cancel()
	}
	h, m, untell := p.ext, p.mcp, p.untell
	p.untell = nil
	p.mu.Unlock()
	if untell != nil {
		untell()
	}
	var wg sync.WaitGroup
	var mcpErr error
	if m != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mcpErr = m.Close()
		}()
	}
	var extErr error
	if h != nil {
		extErr = h.Close(ctx)
	}
	wg.Wait()
	p.wg.Wait()
	return errors.Join(extErr, mcpErr)
}

// closePlugins is Close's part: the extensions and MCP servers stop
// within StopTimeout.
func (s *Session) closePlugins() error {
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	return s.plug.stop(ctx)
}

// writerOf returns w, or a writer that discards when w is nil.
func writerOf(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
