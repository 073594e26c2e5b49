package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"zot.dev/zot/sdk/extwire"
)

// Handlers of what the host asks. Each runs on a goroutine of its own;
// ctx ends when the host cancels the request or shuts the extension down.
type (
	// CommandFunc answers a slash command; args is what the user typed
	// after its name, trimmed.
	CommandFunc func(ctx context.Context, args string) Response
	// ToolFunc runs a tool on the arguments the model wrote (a JSON
	// object the function checks itself).
	ToolFunc func(ctx context.Context, args json.RawMessage) ToolResult
	// EventFunc observes a lifecycle event. Events are handled one at a
	// time, in order: a slow one delays the next.
	EventFunc func(ctx context.Context, ev *Event)
)

// Errors of an Extension's methods.
var (
	// ErrNotRunning: Notify, RenderPanel or ClosePanel was called while
	// Run was not serving (before it, or after it returned).
	ErrNotRunning = errors.New("ext: the extension is not running")
	// ErrAlreadyRunning: Run or Serve was called a second time.
	ErrAlreadyRunning = errors.New("ext: Run was already called")
)

// Extension is one extension: what it offers and the handlers that
// answer the host. Declare everything, then call [Extension.Run]. Its
// methods are safe for concurrent use, also while it runs.
type Extension struct {
	name, version string

	mu         sync.Mutex
	commands   map[string]CommandFunc
	tools      map[string]ToolFunc
	events     map[extwire.EventName][]EventFunc
	onTool     func(context.Context, ToolCall) ToolCallDecision
	onTurn     func(context.Context, int) TurnDecision
	onMessage  func(context.Context, string) MessageDecision
	panelKey   func(context.Context, PanelKey)
	panelClose func(context.Context, string)
	inits      []func(context.Context, HostInfo) error
	// regs are the registrations not yet written; once live, they are
	// written as they are made.
	regs    []extwire.ExtensionFrame
	live    bool     // ready was sent: registrations go out at once
	started bool     // Run or Serve was called
	sess    *session // while serving
	host    HostInfo
	logOut  io.Writer
}

// New returns an extension named name (it must be the manifest's name)
// at version.
func New(name, version string) *Extension {
	return &Extension{
		name:     name,
		version:  version,
		commands: map[string]CommandFunc{},
		tools:    map[string]ToolFunc{},
		events:   map[extwire.EventName][]EventFunc{},
		logOut:   os.Stderr,
	}
}

// Name returns the extension's name.
func (e *Extension) Name() string { return e.name }

// register records a registration frame: queued until Run writes it, or
// written at once once the extension is ready.
func (e *Extension) registerLocked(f extwire.ExtensionFrame) {
	if e.live && e.sess != nil {
		e.sess.out.Send(f)
		return
	}
	e.regs = append(e.regs, f)
}

// Command offers the slash command /name. Registering a name again
// replaces its handler.
func (e *Extension) Command(name, description string, fn CommandFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.commands[name] = fn
	e.registerLocked(&extwire.RegisterCommandFrame{Name: name, Description: description})
}

// ToolOption changes how a tool is registered.
type ToolOption func(*extwire.RegisterToolFrame)

// WithTimeout sets how long the host waits for the tool's result
// (default 60 s).
func WithTimeout(d time.Duration) ToolOption {
	return func(f *extwire.RegisterToolFrame) {
		ms := d.Milliseconds()
		if ms < 1 {
			ms = 1
		}
		f.TimeoutMs = &ms
	}
}

// ReadOnly says the tool changes nothing (it only reads or computes): it
// then runs in a session's read-only mode and is not asked about, where
// other extension tools are refused or asked about.
func ReadOnly() ToolOption {
	return func(f *extwire.RegisterToolFrame) {
		t := true
		f.ReadOnly = &t
	}
}

// Tool offers a tool the model can call. schema is the JSON Schema of
// its arguments, an object schema; nil means any object. Registering a
// name again replaces its handler.
func (e *Extension) Tool(name, description string, schema json.RawMessage, fn ToolFunc, opts ...ToolOption) {
	f := &extwire.RegisterToolFrame{Name: name, Description: description, Schema: schema}
	for _, o := range opts {
		o(f)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tools[name] = fn
	e.registerLocked(f)
}

// On subscribes fn to a lifecycle event: [SessionStart], [TurnStart],
// [TurnEnd], [ToolCallEvent] or [AssistantMessage].
func (e *Extension) On(event extwire.EventName, fn EventFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events[event] = append(e.events[event], fn)
	e.resubscribeLocked()
}

// InterceptToolCall asks fn before every tool call the agent makes: it
// may block the call or rewrite its arguments. A panic blocks the call.
// A second fn is chained after the first, not put in its place: the
// first block wins, and fn judges the arguments the one before rewrote.
// Nil removes them all.
func (e *Extension) InterceptToolCall(fn func(ctx context.Context, call ToolCall) ToolCallDecision) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if prev := e.onTool; prev != nil && fn != nil {
		next := fn
		fn = func(ctx context.Context, call ToolCall) ToolCallDecision {
			d := prev(ctx, call)
			if d.Block {
				return d
			}
			if d.ModifiedArgs != nil {
				call.Args = d.ModifiedArgs
			}
			d2 := next(ctx, call)
			if !d2.Block && d2.ModifiedArgs == nil {
				d2.ModifiedArgs = d.ModifiedArgs
			}
			return d2
		}
	}
	e.onTool = fn
	e.resubscribeLocked()
}

// InterceptTurnStart asks fn before every model call (step counts the
// calls of one prompt from 1): it may block the turn. A second fn is
// chained after the first, not put in its place: either one blocks the
// turn. Nil removes them all.
func (e *Extension) InterceptTurnStart(fn func(ctx context.Context, step int) TurnDecision) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if prev := e.onTurn; prev != nil && fn != nil {
		next := fn
		fn = func(ctx context.Context, step int) TurnDecision {
			if d := prev(ctx, step); d.Block {
				return d
			}
			return next(ctx, step)
		}
	}
	e.onTurn = fn
	e.resubscribeLocked()
}

// InterceptAssistantMessage asks fn before an assistant message is shown:
// it may hide it or replace the text clients see. A second fn is chained
// after the first, not put in its place: the first block wins, and fn
// judges the text the one before replaced. Nil removes them all.
func (e *Extension) InterceptAssistantMessage(fn func(ctx context.Context, text string) MessageDecision) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if prev := e.onMessage; prev != nil && fn != nil {
		next := fn
		fn = func(ctx context.Context, text string) MessageDecision {
			d := prev(ctx, text)
			if d.Block {
				return d
			}
			if d.ReplaceText != "" {
				text = d.ReplaceText
			}
			d2 := next(ctx, text)
			if !d2.Block && d2.ReplaceText == "" {
				d2.ReplaceText = d.ReplaceText
			}
			return d2
		}
	}
	e.onMessage = fn
	e.resubscribeLocked()
}

// OnPanelKey receives the keys pressed in the extension's panels, one at
// a time, in order. Redraw with [Extension.RenderPanel].
func (e *Extension) OnPanelKey(fn func(ctx context.Context, key PanelKey)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.panelKey = fn
}

// OnPanelClose is told when the user closed one of the extension's
// panels; it should stop rendering it.
func (e *Extension) OnPanelClose(fn func(ctx context.Context, panelID string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.panelClose = fn
}

// Init adds fn to what runs once hello_ack has arrived, before the
// extension says it is ready: it may read the host's info (the data
// folder, the model) and register more. What was registered and
// subscribed before Run is announced with hello, before Init runs; what
// Init adds goes out after it, before ready. The host waits for that ready
// however long Init takes, up to the extension's start timeout (the
// manifest's start_timeout_ms). An error ends Run with it.
func (e *Extension) Init(fn func(ctx context.Context, host HostInfo) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inits = append(e.inits, fn)
}

// Host returns what the host said in hello_ack; before it arrived, the
// zero HostInfo.
func (e *Extension) Host() HostInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.host
}

// SetLogOutput sends what Logf writes to w instead of stderr.
func (e *Extension) SetLogOutput(w io.Writer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.logOut = w
}

// Logf writes a line to the extension's log (stderr, which zot appends
// to $ZOT_HOME/logs/ext-<name>.log). Never write to stdout: it carries
// the protocol.
func (e *Extension) Logf(format string, args ...any) {
	e.mu.Lock()
	w := e.logOut
	e.mu.Unlock()
	fmt.Fprintf(w, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// Notify pushes a notice for the user: level is [LevelInfo],
// [LevelSuccess], [LevelWarn] or [LevelError]. Called before hello_ack
// arrived, it waits for it.
func (e *Extension) Notify(level extwire.NotifyLevel, message string) error {
	return e.push(&extwire.NotifyFrame{Level: level, Message: message})
}

// RenderPanel redraws an open panel (p.ID names it).
func (e *Extension) RenderPanel(p Panel) error {
	return e.push(&extwire.PanelRenderFrame{PanelID: p.ID, Title: p.Title, Lines: p.Lines, Footer: p.Footer})
}

// ClosePanel closes a panel the extension opened.
func (e *Extension) ClosePanel(panelID string) error {
	return e.push(&extwire.PanelCloseFrame{PanelID: panelID})
}

// push writes a frame the extension sends on its own, once hello_ack has
// arrived.
func (e *Extension) push(f extwire.ExtensionFrame) error {
	e.mu.Lock()
	s := e.sess
	e.mu.Unlock()
	if s == nil {
		return ErrNotRunning
	}
	select {
	case <-s.acked:
	case <-s.ctx.Done():
		return ErrNotRunning
	}
	return s.send(f)
}

// capabilitiesLocked says what the extension uses, for hello.
func (e *Extension) capabilitiesLocked() []string {
	var c []string
	if len(e.commands) > 0 {
		c = append(c, "commands")
	}
	if len(e.tools) > 0 {
		c = append(c, "tools")
	}
	if len(e.events) > 0 || e.onTool != nil || e.onTurn != nil || e.onMessage != nil {
		c = append(c, "events")
	}
	if e.panelKey != nil || e.panelClose != nil {
		c = append(c, "panels")
	}
	return c
}

// subscribeLocked is the subscribe frame for what is subscribed, or nil.
func (e *Extension) subscribeLocked() *extwire.SubscribeFrame {
	f := &extwire.SubscribeFrame{}
	for ev := range e.events {
		f.Events = append(f.Events, ev)
	}
	slices.Sort(f.Events)
	if e.onTool != nil {
		f.Intercept = append(f.Intercept, extwire.InterceptEventToolCall)
	}
	if e.onTurn != nil {
		f.Intercept = append(f.Intercept, extwire.InterceptEventTurnStart)
	}
	if e.onMessage != nil {
		f.Intercept = append(f.Intercept, extwire.InterceptEventAssistantMessage)
	}
	if len(f.Events) == 0 && len(f.Intercept) == 0 {
		return nil
	}
	return f
}

// resubscribeLocked sends a fresh subscribe when the subscriptions change
// after ready (a later subscribe replaces the earlier one).
func (e *Extension) resubscribeLocked() {
	if !e.live || e.sess == nil {
		return
	}
	f := e.subscribeLocked()
	if f == nil {
		f = &extwire.SubscribeFrame{Events: []extwire.EventName{}}
	}
	e.sess.out.Send(f)
}
