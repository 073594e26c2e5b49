package acpagent

import (
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/exthost"
)

// maxUnheard bounds the notices a session keeps while no client has it
// open, to tell the first one that does.
const maxUnheard = 32

// notify tells every client of the session a notice, as a _zot/notify
// notification. One that finds no client (an extension that failed to
// start, or a folder not trusted, before the session/new answer attached
// anybody) is kept, and told to the next client that opens the session
// right after its answer.
func (s *session) notify(n acp.ZotNotifyNotification) {
	id := s.id
	n.SessionID = &id
	it := item{note: n, method: acp.MethodZotNotify, keep: true}
	s.mu.Lock()
	if len(s.clients) == 0 {
		s.keepUnheardLocked(&it)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.push(it)
}

// keepUnheardLocked keeps a notice no client heard; the caller holds
// s.mu.
func (s *session) keepUnheardLocked(it *item) {
	if len(s.x.unheard) < maxUnheard {
		s.x.unheard = append(s.x.unheard, item{note: it.note, method: it.method})
	}
}

// tellUnheard queues the notices nobody heard for c alone.
func (s *session) tellUnheard(c *conn) {
	s.mu.Lock()
	list := s.x.unheard
	s.x.unheard = nil
	s.mu.Unlock()
	for _, it := range list {
		it.only = c
		s.push(it)
	}
}

// extensionNotice turns what the session's extensions push into what its
// clients are told: a notice (their own notify, or zot's report that one
// failed to start or crashed) becomes _zot/notify, and goes to the log
// unless the host logged it already. Panels have no ACP form.
func (s *session) extensionNotice(n exthost.Notice) {
	if n.Kind != exthost.NoticeNotify {
		return
	}
	if !n.Logged {
		s.agent.logf("session %s: extension %s: %s", s.id, n.Extension, oneLine(n.Message))
	}
	level := acp.NotifyLevel(n.Level)
	if level == "" {
		level = acp.NotifyLevelInfo
	}
	if n.Source == exthost.SourceTrust {
		s.notify(acp.ZotNotifyNotification{Level: level, Message: n.Message, Source: acp.NotifySourceTrust})
		return
	}
	name := n.Extension
	s.notify(acp.ZotNotifyNotification{Level: level, Message: n.Message, Source: acp.NotifySourceExtension, Name: &name})
}
