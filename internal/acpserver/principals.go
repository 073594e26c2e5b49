package acpserver

import (
	"zot.dev/zot/internal/acp"
	zsession "zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
)

// Principals. Every session belongs to one principal, recorded in its
// file's header when the file is made (sessionfile's owner) and listed by
// the store: the daemon's own user ("": the Unix socket's peer, zot acp's
// stdio, and every other door of the zot home), or a token's name on the
// network listener (jsonrpc.Peer.Principal). A connection sees and acts
// on its principal's sessions only; an admin principal's on every
// session. A session it may not see is answered as one that does not
// exist (unknown_session), so its id says nothing.

// principal returns who is on h's connection.
func (h *conn) principal() string { return h.c.Peer().Principal }

// mayOwn reports whether h's principal may see a session of owner.
func (h *conn) mayOwn(owner string) bool {
	p := h.c.Peer()
	return p.Admin || owner == p.Principal
}

// may reports whether session id exists and h's principal may see it.
func (h *conn) may(id string) bool {
	owner, ok := h.agent.ownerOf(id)
	return ok && h.mayOwn(owner)
}

// ownerOf returns the principal session id belongs to, and whether there
// is such a session: an open one's, else what its file's header says.
func (a *Agent) ownerOf(id string) (string, bool) {
	if s := a.lookup(id); s != nil {
		return s.owner, true
	}
	if !store.ValidID(id) || !a.stored(id) {
		return "", false
	}
	info, err := zsession.ReadInfo(a.path(id))
	if err != nil {
		// Unreadable: the daemon's own user's, which is whose files the
		// folder holds unless a header says otherwise.
		return "", true
	}
	return info.Owner, true
}

// unknownSession is the error for a session that does not exist, or that
// the asker may not see.
func unknownSession(id string) error {
	return appError(acp.ErrorKindUnknownSession, id, "no session %q", id)
}

// underCap refuses to open session id for owner (a principal of the
// network listener) when it has MaxSessions open already.
func (a *Agent) underCap(owner, id string) error {
	if owner == "" || a.opts.MaxSessions <= 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return nil // open already: it takes no new place
	}
	n := 0
	for _, s := range a.sessions {
		if s.owner == owner {
			n++
		}
	}
	if n >= a.opts.MaxSessions {
		return appError(acp.ErrorKindLimitExceeded, id, "%s has %d sessions open, as many as the daemon allows one principal (--max-sessions); close one first", owner, n)
	}
	return nil
}
