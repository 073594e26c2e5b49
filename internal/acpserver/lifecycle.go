package acpserver

import (
	"fmt"
	"sync"

	zsession "zot.dev/zot/internal/sessionfile"
)

// gates serialize what changes whether a session is open in the agent:
// opening its file (session/load, session/resume), closing it once no
// connection has it open, and deleting it. Without them two loads of one
// stored session race to lock its file, and the loser is told another
// process holds it; a load that finds a session as its last client lets
// go joins a session being closed; a delete lets a load reopen the file
// it is about to remove.
type gates struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the holder lets go
}

// claim waits until nobody holds id's gate and takes it; the function it
// returns lets go. The holders do bounded work: read or close a session
// file, end a session.
func (g *gates) claim(id string) (release func()) {
	for {
		g.mu.Lock()
		ch, held := g.held[id]
		if !held {
			if g.held == nil {
				g.held = map[string]chan struct{}{}
			}
			ch = make(chan struct{})
			g.held[id] = ch
			g.mu.Unlock()
			return func() {
				g.mu.Lock()
				delete(g.held, id)
				g.mu.Unlock()
				close(ch)
			}
		}
		g.mu.Unlock()
		<-ch
	}
}

// pinned returns the open session id, pinned (see session.pins), or nil.
func (a *Agent) pinned(id string) *acpSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s != nil {
		s.mu.Lock()
		s.pins++
		s.mu.Unlock()
	}
	return s
}

// unpin drops a pin taken for a request that did not attach its
// connection.
func (s *acpSession) unpin() {
	s.mu.Lock()
	if s.pins > 0 {
		s.pins--
	}
	s.mu.Unlock()
}

// closeIfIdle closes s and forgets it when no connection has it open, no
// request is about to attach one, and no turn runs. Whoever lets go last
// (the last connection's release once its turn ended, or a request that
// found the session and failed) closes it.
func (a *Agent) closeIfIdle(s *acpSession) {
	defer a.gates.claim(s.id)()
	a.mu.Lock()
	s.mu.Lock()
	idle := len(s.clients) == 0 && s.pins == 0 && s.turn == nil && !s.eng.Busy()
	s.mu.Unlock()
	if !idle || a.sessions[s.id] != s {
		a.mu.Unlock()
		return
	}
	delete(a.sessions, s.id)
	a.mu.Unlock()
	if err := s.close(); err != nil {
		a.logf("closing session %s: %v", s.id, err)
	}
}

// removeFile removes the file of session id and its lock file, holding
// its lock meanwhile: a session another process holds (zot --session, a
// daemon on the same zot home) is refused as session_locked and kept.
func (a *Agent) removeFile(id string) error {
	if err := zsession.Remove(a.path(id)); err != nil {
		return a.errorOf(fmt.Errorf("deleting session %s: %w", id, err), id, "")
	}
	return nil
}

// isClosed reports whether Close has begun: the sessions are ending
// because the daemon stops.
func (a *Agent) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// Busy reports whether a session runs a turn (or a compaction), such as
// one whose client has left: an ephemeral daemon waits for it.
func (a *Agent) Busy() bool {
	a.mu.Lock()
	list := make([]*acpSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		list = append(list, s)
	}
	a.mu.Unlock()
	for _, s := range list {
		if s.eng.Busy() {
			return true
		}
	}
	return false
}
