package ext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	zext "zot.dev/zot/sdk/ext"
	"zot.dev/zot/sdk/extwire"
)

// interactiveTimeout is how long zot waits for an interactive tool's
// result: a person may take their time.
const interactiveTimeout = 24 * time.Hour

// errNoCallTool is what CallTool returns: zot's host has no call_tool.
var errNoCallTool = errors.New("ext: zot's host does not offer call_tool: an extension cannot call another tool")

// Extension is one extension: declare its commands, tools, intercepts and
// panels, then call [Extension.Run]. It runs on [zot.dev/zot/sdk/ext].
// Its methods are safe for concurrent use.
type Extension struct {
	x *zext.Extension

	// in and out replace stdin and stdout when set (tests).
	in  io.Reader
	out io.Writer

	mu                sync.Mutex
	events            map[string]EventHandler
	interceptTool     InterceptHandler
	interceptToolRich ToolCallHandler
	toolHooked        bool
	// turnHooked, assistantHooked: the wrappers that read interceptTurn
	// and interceptAssistant are registered with the SDK (once: its
	// intercepts chain).
	turnHooked, assistantHooked bool
	interceptTurn               TurnStartHandler
	interceptAssistant          AssistantMessageHandler
	beforeStart                 BeforeAgentStartHandler
	panelKeys                   map[string]func(key, text string)
	panelCloses                 map[string]func()
	onHello                     func(HostInfo)
}

// New returns an extension named name (the manifest's name) at version.
func New(name, version string) *Extension {
	e := &Extension{
		x:           zext.New(name, version),
		events:      map[string]EventHandler{},
		panelKeys:   map[string]func(key, text string){},
		panelCloses: map[string]func(){},
	}
	e.x.OnPanelKey(e.panelKey)
	e.x.OnPanelClose(e.panelClose)
	e.x.Init(e.hello)
	return e
}

// Host returns what zot said in hello_ack; before it arrived, the zero
// HostInfo.
func (e *Extension) Host() HostInfo {
	h := e.x.Host()
	return HostInfo{
		ProtocolVersion: h.ProtocolVersion,
		ZotVersion:      h.ZotVersion,
		Provider:        h.Provider,
		Model:           h.Model,
		CWD:             h.CWD,
		ExtensionDir:    h.ExtensionDir,
		DataDir:         h.DataDir,
	}
}

// OnHello sets fn to run once hello_ack has arrived, before the
// extension's registrations are announced: it may read the [HostInfo] and
// register commands, tools, subscriptions and intercepts. A later call
// replaces fn.
func (e *Extension) OnHello(fn func(HostInfo)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onHello = fn
}

func (e *Extension) hello(ctx context.Context, _ zext.HostInfo) error {
	e.mu.Lock()
	fn := e.onHello
	e.mu.Unlock()
	if fn != nil {
		fn(e.Host())
	}
	return nil
}

// Logf writes a line to the extension's log: stderr, which zot appends to
// $ZOT_HOME/logs/ext-<name>.log. stdout carries the protocol: never print
// to it.
func (e *Extension) Logf(format string, args ...any) { e.x.Logf(format, args...) }

// OnPanelKey sets what runs for the panel panelID: onKey for each key
// pressed in it (key is up, down, enter, esc, rune, …; text is the
// character with rune), onClose when the user closed it. Keys, closes and
// events are handled one at a time, in the order zot sent them. A nil
// callback leaves the one set before in place.
func (e *Extension) OnPanelKey(panelID string, onKey func(key, text string), onClose func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if onKey != nil {
		e.panelKeys[panelID] = onKey
	}
	if onClose != nil {
		e.panelCloses[panelID] = onClose
	}
}

func (e *Extension) panelKey(_ context.Context, k zext.PanelKey) {
	e.mu.Lock()
	fn := e.panelKeys[k.PanelID]
	e.mu.Unlock()
	if fn != nil {
		fn(string(k.Key), k.Text)
	}
}

func (e *Extension) panelClose(_ context.Context, panelID string) {
	e.mu.Lock()
	fn := e.panelCloses[panelID]
	e.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// OpenPanel opens a panel without a command, e.g. from a tool. zot's
// protocol opens panels in a command's answer; a panel an extension draws
// on its own is opened by its first frame, which clients receive as
// panel_render. Keys pressed in it come to [Extension.OnPanelKey].
func (e *Extension) OpenPanel(id, title string, lines []string, footer string) {
	e.RenderPanel(id, title, lines, footer)
}

// RenderPanel redraws the panel panelID.
func (e *Extension) RenderPanel(panelID, title string, lines []string, footer string) {
	if err := e.x.RenderPanel(zext.Panel{ID: panelID, Title: title, Lines: lines, Footer: footer}); err != nil {
		e.x.Logf("rendering panel %s: %v", panelID, err)
	}
}

// ClosePanel closes the panel panelID.
func (e *Extension) ClosePanel(panelID string) {
	if err := e.x.ClosePanel(panelID); err != nil {
		e.x.Logf("closing panel %s: %v", panelID, err)
	}
}

// Command offers the slash command /name; fn answers it. Registering a
// name again replaces its handler.
func (e *Extension) Command(name, description string, fn CommandHandler) {
	e.x.Command(name, description, func(ctx context.Context, args string) zext.Response {
		return e.response(fn(args))
	})
}

// Tool offers the model a tool; schema is the JSON Schema of its
// arguments (an object schema). zot waits 60 s for its result.
func (e *Extension) Tool(name, description string, schema json.RawMessage, fn ToolHandler) {
	e.x.Tool(name, description, schema, func(ctx context.Context, args json.RawMessage) zext.ToolResult {
		return e.toolResult(fn(args))
	})
}

// StructuredTool offers a tool whose result also has a JSON form for
// scripts. zot has no structured results: outputSchema and
// [ToolResult.StructuredContent] are not sent, and the model sees Content,
// as with [Extension.Tool].
func (e *Extension) StructuredTool(name, description string, schema, outputSchema json.RawMessage, fn ToolHandler) {
	e.Tool(name, description, schema, fn)
}

// ToolWithOptions offers a tool whose handler gets a context that ends
// when zot cancels the call. Of options, only Interactive changes what zot
// does (see [ToolOptions]).
func (e *Extension) ToolWithOptions(name, description string, schema json.RawMessage, options ToolOptions, fn InteractiveToolHandler) {
	var opts []zext.ToolOption
	if options.Interactive {
		opts = append(opts, zext.WithTimeout(interactiveTimeout))
	}
	e.x.Tool(name, description, schema, func(ctx context.Context, args json.RawMessage) zext.ToolResult {
		return e.toolResult(fn(ctx, args))
	}, opts...)
}

// DeferredTool offers a tool that upstream zot hides until a result
// activates it; zot offers it from the start, like [Extension.Tool].
func (e *Extension) DeferredTool(name, description string, schema json.RawMessage, fn ToolHandler) {
	e.Tool(name, description, schema, fn)
}

// InteractiveTool offers a tool that waits for the user (through a panel,
// say): zot waits a day for its result, and the handler's context ends
// when zot cancels the call; the handler should then close its panel and
// return.
func (e *Extension) InteractiveTool(name, description string, schema json.RawMessage, fn InteractiveToolHandler) {
	e.ToolWithOptions(name, description, schema, ToolOptions{Interactive: true}, fn)
}

// CallTool would ask the host to run a tool. zot's host does not offer
// that: it returns an error saying so.
func (e *Extension) CallTool(ctx context.Context, name string, args any) (ToolResult, error) {
	return ToolResult{}, errNoCallTool
}

// On subscribes fn to the lifecycle event name: session_start,
// turn_start, turn_end, tool_call or assistant_message (the events zot
// emits; for another name fn is never called, which is logged). A later
// call for the same name replaces fn.
func (e *Extension) On(name string, fn EventHandler) {
	if !zotEvent(name) {
		e.x.Logf("zot does not emit the %q event: its handler is never called", name)
		return
	}
	e.mu.Lock()
	_, had := e.events[name]
	e.events[name] = fn
	e.mu.Unlock()
	if had {
		return
	}
	e.x.On(extwire.EventName(name), func(_ context.Context, ev *zext.Event) {
		e.mu.Lock()
		fn := e.events[name]
		e.mu.Unlock()
		if fn != nil {
			fn(event(ev))
		}
	})
}

func zotEvent(name string) bool {
	switch extwire.EventName(name) {
	case zext.SessionStart, zext.TurnStart, zext.TurnEnd, zext.ToolCallEvent, zext.AssistantMessage:
		return true
	}
	return false
}

func event(ev *zext.Event) Event {
	out := Event{
		Name:     string(ev.Event),
		Stop:     ev.Stop,
		Error:    ev.Error,
		ToolID:   ev.ToolID,
		ToolName: ev.ToolName,
		ToolArgs: ev.ToolArgs,
		Text:     ev.Text,
	}
	if ev.Step != nil {
		out.Step = int(*ev.Step)
	}
	return out
}

// InterceptToolCall sets fn to decide on every tool call the agent makes
// before it runs: allow false refuses it, and the model sees the reason
// as the tool's error. [Extension.InterceptToolCallX], when set, is asked
// instead. A handler that panics refuses the call.
func (e *Extension) InterceptToolCall(fn InterceptHandler) {
	e.mu.Lock()
	e.interceptTool = fn
	e.mu.Unlock()
	e.hookToolCalls()
}

// InterceptToolCallX sets fn to decide on every tool call before it runs:
// block it, or rewrite its arguments. It takes precedence over
// [Extension.InterceptToolCall].
func (e *Extension) InterceptToolCallX(fn ToolCallHandler) {
	e.mu.Lock()
	e.interceptToolRich = fn
	e.mu.Unlock()
	e.hookToolCalls()
}

// hookToolCalls subscribes the tool_call intercept once.
func (e *Extension) hookToolCalls() {
	e.mu.Lock()
	hooked := e.toolHooked
	e.toolHooked = true
	e.mu.Unlock()
	if !hooked {
		e.x.InterceptToolCall(e.decideToolCall)
	}
}

func (e *Extension) decideToolCall(_ context.Context, c zext.ToolCall) zext.ToolCallDecision {
	e.mu.Lock()
	rich, plain := e.interceptToolRich, e.interceptTool
	e.mu.Unlock()
	switch {
	case rich != nil:
		d := rich(c.Name, c.Args)
		out := zext.ToolCallDecision{Block: d.Block, Reason: d.Reason}
		if !d.Block && len(d.ModifiedArgs) > 0 {
			if isObject(d.ModifiedArgs) {
				out.ModifiedArgs = d.ModifiedArgs
			} else {
				e.x.Logf("ignored modified arguments of %s that are not a JSON object: %.200s", c.Name, d.ModifiedArgs)
			}
		}
		return out
	case plain != nil:
		allow, reason := plain(c.Name, c.Args)
		return zext.ToolCallDecision{Block: !allow, Reason: reason}
	}
	return zext.ToolCallDecision{}
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// InterceptBeforeAgentStart sets fn to replace the system prompt before a
// run. zot has no before_agent_start intercept: fn is never called, which
// Run logs.
func (e *Extension) InterceptBeforeAgentStart(fn BeforeAgentStartHandler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.beforeStart = fn
}

// InterceptTurnStart sets fn to decide on every model call before it is
// made: Block fails the prompt with Reason. A handler that panics blocks
// the turn.
func (e *Extension) InterceptTurnStart(fn TurnStartHandler) {
	e.mu.Lock()
	e.interceptTurn = fn
	hooked := e.turnHooked
	e.turnHooked = fn != nil
	e.mu.Unlock()
	if fn == nil {
		e.x.InterceptTurnStart(nil)
		return
	}
	if hooked {
		return // the wrapper below reads e.interceptTurn: it has fn now
	}
	e.x.InterceptTurnStart(func(_ context.Context, step int) zext.TurnDecision {
		e.mu.Lock()
		fn := e.interceptTurn
		e.mu.Unlock()
		if fn == nil {
			return zext.TurnDecision{}
		}
		d := fn(step)
		return zext.TurnDecision{Block: d.Block, Reason: d.Reason}
	})
}

// InterceptAssistantMessage sets fn to decide on the model's message
// before clients see it: hide it, or show other text. The transcript
// keeps what the model wrote.
func (e *Extension) InterceptAssistantMessage(fn AssistantMessageHandler) {
	e.mu.Lock()
	e.interceptAssistant = fn
	hooked := e.assistantHooked
	e.assistantHooked = fn != nil
	e.mu.Unlock()
	if fn == nil {
		e.x.InterceptAssistantMessage(nil)
		return
	}
	if hooked {
		return // the wrapper below reads e.interceptAssistant: it has fn now
	}
	e.x.InterceptAssistantMessage(func(_ context.Context, text string) zext.MessageDecision {
		e.mu.Lock()
		fn := e.interceptAssistant
		e.mu.Unlock()
		if fn == nil {
			return zext.MessageDecision{}
		}
		d := fn(text)
		out := zext.MessageDecision{Block: d.Block, Reason: d.Reason}
		if !d.Block && d.ReplaceText != text {
			out.ReplaceText = d.ReplaceText
		}
		return out
	})
}

// Notify pushes a notice for the user; level is info, success, warn or
// error (another level is sent as info).
func (e *Extension) Notify(level, message string) {
	l := extwire.NotifyLevel(level)
	switch l {
	case zext.LevelInfo, zext.LevelSuccess, zext.LevelWarn, zext.LevelError:
	default:
		l = zext.LevelInfo
	}
	if err := e.x.Notify(l, message); err != nil {
		e.x.Logf("notify: %v", err)
	}
}

// Run serves zot on stdin and stdout until zot shuts the extension down
// or closes stdin (nil), or a write fails.
func (e *Extension) Run() error {
	e.mu.Lock()
	before := e.beforeStart
	e.mu.Unlock()
	if before != nil {
		e.x.Logf("zot has no before_agent_start intercept: the handler given to InterceptBeforeAgentStart is never called")
	}
	if e.in != nil {
		return e.x.Serve(context.Background(), e.in, e.out)
	}
	return e.x.Run(context.Background())
}

// response turns a command's answer into sdk/ext's.
func (e *Extension) response(r Response) zext.Response {
	var z zext.Response
	switch r.Action {
	case "prompt":
		z = zext.Prompt(r.Prompt)
	case "insert":
		z = zext.Insert(r.Insert)
	case "display":
		z = zext.Display(r.Display)
	case "open_panel":
		if r.OpenPanel == nil {
			return zext.CommandError("the command answered open_panel without a panel")
		}
		p := r.OpenPanel
		z = zext.OpenPanel(zext.Panel{ID: p.ID, Title: p.Title, Lines: p.Lines, Footer: p.Footer})
	case "", "noop":
		z = zext.Noop()
	case "tool_prompt":
		return zext.CommandError("zot cannot run the tool %s ahead of a prompt (action tool_prompt)", r.ToolName)
	default:
		return zext.CommandError("the command answered with the action %q, which zot does not know", r.Action)
	}
	if r.Error != "" {
		z = z.WithError("%s", r.Error)
	}
	return z
}

// toolResult turns a tool's result into sdk/ext's.
func (e *Extension) toolResult(r ToolResult) zext.ToolResult {
	out := zext.ToolResult{IsError: r.IsError, Content: extwire.ToolContents{}}
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			out.Content = append(out.Content, &extwire.TextContent{Text: c.Text})
		case "image":
			out.Content = append(out.Content, &extwire.ImageContent{MIMEType: c.MimeType, Data: c.Data})
		default:
			e.x.Logf("left out a tool result block of type %q: zot takes text and image blocks", c.Type)
		}
	}
	return out
}
