package engine

import (
	"fmt"
	"strings"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// Notice is an event that belongs to no piece of work, pushed by the
// session's extensions or MCP servers (or by the door, for the answer of
// an extension's command): *wire.ExtNotifyEvent, *wire.PanelRenderEvent,
// *wire.PanelCloseEvent, and the events of a command's answer.
type Notice struct {
	// Event is stamped with the session's next seq.
	Event wire.Event
	// Logged says the session wrote the notice to SessionConfig.Log
	// already (zot's report of an extension that failed to start, an MCP
	// server's notices, a folder not trusted): a door that writes notices
	// to the same place leaves it out.
	Logged bool
}

// NoticeSink is where a door takes a session's notices.
type NoticeSink struct {
	// Send gets each notice, stamped, in seq order with the session's
	// other events. It is called with the session's stamping lock held
	// and must not block (a door's Send that only queues).
	Send func(Notice)
	// Full, when set, is asked before a notice the schema marks droppable
	// (wire.DroppableEvent: ext_notify, panel_render, panel_close) is
	// stamped: true drops it (the session's open panels still follow a
	// dropped redraw or close: Panels), so that an extension that floods a client
	// that reads slowly cannot grow zot's memory without bound. Every
	// other event (the answer of a command a client asked for, say) is
	// never dropped.
	Full func() bool
}

// maxEarly bounds the notices kept for a door that has not yet given its
// sink.
const maxEarly = 1000

// notices routes a session's notices: to the configuration's OnEvent
// functions and to the door's sink; those pushed before the door gave
// its sink wait for it (at most maxEarly).
type notices struct {
	sess         *Session
	onExt, onMCP func(wire.Event)

	mu    sync.Mutex
	sink  *NoticeSink
	early []Notice // not yet stamped
}

// SetNoticeSink makes sink the door's destination of the session's
// notices; those pushed before wait for it and go first. Call it once,
// before serving.
func (s *Session) SetNoticeSink(sink NoticeSink) {
	n := &s.plug.notices
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sink = &sink
	early := n.early
	n.early = nil
	for _, x := range early {
		n.sendLocked(x)
	}
}

// Notice writes ev, an event that belongs to no piece of work (the
// answer of an extension's command, say: ext_display, panel_open,
// panel_close), through the session's notices: stamped with the next
// seq and no prompt_id but the one ev carries, shown to the observers,
// handed to the door's sink. It never blocks.
func (s *Session) Notice(ev wire.Event) { s.plug.notices.push(ev, false) }

// push hands a notice on, or keeps it until the door's sink is given.
func (n *notices) push(ev wire.Event, logged bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	x := Notice{Event: ev, Logged: logged}
	if n.sink == nil && (n.onExt == nil && n.onMCP == nil) {
		if len(n.early) < maxEarly {
			n.early = append(n.early, x)
		}
		return
	}
	n.sendLocked(x)
}

// sendLocked stamps x and hands it on. The caller holds n.mu.
func (n *notices) sendLocked(x Notice) {
	if n.sink != nil && n.sink.Full != nil && wire.DroppableEvent(x.Event) && n.sink.Full() {
		// The door drops it, but the session's open panels still
		// change: a client told of them later sees them as they are.
		n.sess.panels.observe(x.Event)
		return
	}
	n.sess.Emit(x.Event, func(ev wire.Event) {
		if f := n.callback(ev); f != nil {
			f(ev)
		}
		if n.sink != nil && n.sink.Send != nil {
			n.sink.Send(x)
		}
	})
}

// callback returns the OnEvent function of the configuration that ev
// concerns: MCPOptions.OnEvent for an MCP server's notice,
// ExtensionConfig.OnEvent for the rest.
func (n *notices) callback(ev wire.Event) func(wire.Event) {
	if e, ok := ev.(*wire.ExtNotifyEvent); ok && strings.HasPrefix(e.Source, "mcp:") {
		return n.onMCP
	}
	return n.onExt
}

// SourceSettings is the source of a notice about the session's settings
// files: one that does not parse, a project's allow rules left out, an
// answer that could not be saved.
const SourceSettings = "settings"

// settingsWarning tells the user, on the session's log and through its
// notices, what its settings leave out.
func (s *Session) settingsWarning(msg string) {
	if s.log != nil {
		fmt.Fprintln(s.log, "zot: "+msg)
	}
	s.plug.notices.push(&wire.ExtNotifyEvent{Extension: SourceSettings, Source: SourceSettings, Level: "warn", Message: msg}, s.log != nil)
}
