package acpserver

import (
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/sdk/wire"
)

// maxUnheard bounds the notices a session keeps while no client has it
// open, to tell the first one that does.
const maxUnheard = 32

// keepUnheardLocked keeps a notice no client heard; the caller holds
// s.mu.
func (s *acpSession) keepUnheardLocked(it *item) {
	if len(s.x.unheard) < maxUnheard {
		s.x.unheard = append(s.x.unheard, item{note: it.note, method: it.method})
	}
}

// tellUnheard queues the notices nobody heard for c alone.
func (s *acpSession) tellUnheard(c *conn) {
	s.mu.Lock()
	list := s.x.unheard
	s.x.unheard = nil
	s.mu.Unlock()
	for _, it := range list {
		it.only = c
		s.push(it)
	}
}

// engineNotice turns what the session's extensions and MCP servers push
// into what its clients are told: a notice (an extension's notify, zot's
// report that one failed to start or crashed, an MCP server's notice, a
// folder not trusted) becomes _zot/notify, and goes to the log unless
// zot logged it already. It is called with the engine's stamping lock
// held, so it only queues, and logs through the agent's log, which never
// waits (it is kept for the next client when none has the session
// open). A client that is behind does not get it (the schema lets it be
// dropped). A panel's redraw or close becomes its notification
// (panels.go).
func (s *acpSession) engineNotice(n engine.Notice) {
	if s.panelNotice(n.Event) { // panels.go
		return
	}
	e, ok := n.Event.(*wire.ExtNotifyEvent)
	if !ok {
		return
	}
	if !n.Logged {
		s.agent.logf("session %s: extension %s: %s", s.id, e.Extension, oneLine(e.Message))
	}
	level := acp.NotifyLevel(e.Level)
	if level == "" {
		level = acp.NotifyLevelInfo
	}
	id := s.id
	note := acp.ZotNotifyNotification{SessionID: &id, Level: level, Message: e.Message, Source: acp.NotifySourceExtension}
	switch {
	case e.Source == exthost.SourceTrust:
		note.Source = acp.NotifySourceTrust
	case e.Source == engine.SourceSettings:
		note.Source = acp.NotifySourceSettings
	case strings.HasPrefix(e.Source, "mcp:"):
		name := strings.TrimPrefix(e.Source, "mcp:")
		note.Source, note.Name = acp.NotifySourceMCP, &name
	default:
		name := e.Extension
		note.Name = &name
	}
	s.push(item{note: note, method: acp.MethodZotNotify, keep: true, droppable: true})
}
