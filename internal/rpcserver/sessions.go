package rpcserver

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/wire"
)

// dispatchSessions answers the commands of the session store
// (list_sessions, load_session, fork_session); it reports false for any
// other command. The store is opened at the first of them, so a client
// that uses none pays nothing for it.
func (s *Server) dispatchSessions(cmd wire.Command) bool {
	id, typ := cmd.GetID(), cmd.Type()
	switch cmd.(type) {
	case *wire.ListSessionsCommand, *wire.LoadSessionCommand, *wire.ForkSessionCommand:
	default:
		return false
	}
	if s.opts.Sessions == nil {
		s.fail(id, typ, wire.CodeInvalidParams, "%s: this zot keeps no session store", typ)
		return true
	}
	st, err := s.opts.Sessions()
	if err != nil {
		s.fail(id, typ, wire.CodeInternal, "%s: %s", typ, oneLine(err))
		return true
	}
	ctx := context.Background()
	switch c := cmd.(type) {
	case *wire.ListSessionsCommand:
		var f store.Filter
		if c.CWD != "" {
			f.CWD = c.CWD
			if !filepath.IsAbs(f.CWD) {
				f.CWD = filepath.Join(s.sess.CWD(), f.CWD)
			}
		}
		list, err := st.List(ctx, f)
		if err != nil {
			s.fail(id, typ, wire.CodeInternal, "%s: %s", typ, oneLine(err))
			return true
		}
		cur := s.currentID(st)
		res := wire.SessionsResult{Sessions: make([]wire.SessionInfo, 0, len(list))}
		for _, e := range list {
			res.Sessions = append(res.Sessions, sessionInfo(e, cur))
		}
		s.respond(id, typ, res)
	case *wire.LoadSessionCommand:
		e, err := s.loadStored(ctx, st, c.SessionID)
		if err != nil {
			s.failSession(id, typ, err)
			return true
		}
		s.respond(id, typ, wire.LoadSessionResult{Session: sessionInfo(e, e.ID)})
	case *wire.ForkSessionCommand:
		s.fork(ctx, st, id, typ, c)
	}
	return true
}

// fork answers fork_session.
func (s *Server) fork(ctx context.Context, st *store.Store, id wire.ID, typ string, c *wire.ForkSessionCommand) {
	parent := c.SessionID
	if parent == "" {
		if parent = s.currentID(st); parent == "" {
			s.fail(id, typ, wire.CodeInvalidParams, "fork_session: this zot keeps no stored session (start it with --continue or --session, or load_session one): name one with session_id")
			return
		}
	}
	var at store.ForkPoint
	switch {
	case c.AtIndex != nil && c.AtMessageID != "":
		s.fail(id, typ, wire.CodeInvalidParams, "fork_session: at_index and at_message_id do not go together")
		return
	case c.AtIndex != nil:
		at = store.AtIndex(int(*c.AtIndex))
	case c.AtMessageID != "":
		at = store.AtMessage(c.AtMessageID)
	}
	load := c.Load == nil || *c.Load
	if load && s.sess.Busy() {
		// Refused before the fork is made, not after.
		s.failErr(id, typ, engine.ErrBusy)
		return
	}
	f, err := st.Fork(ctx, parent, at)
	if err != nil {
		s.failSession(id, typ, err)
		return
	}
	cur := s.currentID(st)
	if load {
		e, err := s.loadStored(ctx, st, f.ID)
		if err != nil {
			s.failSession(id, typ, err)
			return
		}
		f.Entry, cur = e, e.ID
	}
	s.respond(id, typ, wire.ForkSessionResult{
		Session:   sessionInfo(f.Entry, cur),
		AtIndex:   int64(f.At),
		MessageID: f.MessageID,
		Message:   agent.WireMessage(&f.Message),
		Loaded:    load,
	})
}

// loadStored makes stored session sid this process's, and returns its
// entry as of then.
func (s *Server) loadStored(ctx context.Context, st *store.Store, sid string) (store.Entry, error) {
	if !st.Has(sid) {
		return store.Entry{}, store.ErrNotFound
	}
	if err := s.sess.LoadFile(st.Path(sid), sid); err != nil {
		return store.Entry{}, err
	}
	return st.Get(ctx, sid)
}

// currentID is the id of this process's session in st; "" when it keeps
// none there.
func (s *Server) currentID(st *store.Store) string {
	if id := s.sess.StoredID(); id != "" {
		return id
	}
	id, _ := st.IDOf(s.sess.SessionFile())
	return id
}

// failSession answers a failed session command with its code.
func (s *Server) failSession(id wire.ID, typ string, err error) {
	var corrupt *sessionfile.CorruptError
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrNoForkPoint):
		s.fail(id, typ, wire.CodeNotFound, "%s: %s", typ, oneLine(err))
	case errors.Is(err, sessionfile.ErrLocked):
		s.fail(id, typ, wire.CodeSessionLocked, "%s: %s", typ, oneLine(err))
	case errors.As(err, &corrupt):
		s.fail(id, typ, wire.CodeInvalidParams, "%s: %s", typ, oneLine(err))
	default:
		s.failErr(id, typ, err)
	}
}

// sessionInfo is e on the wire; current is the id of this process's
// session.
func sessionInfo(e store.Entry, current string) wire.SessionInfo {
	info := wire.SessionInfo{
		ID: e.ID, Title: e.Title, CWD: e.CWD,
		Created: wireTime(e.Created), Updated: wireTime(e.Updated),
		MessageCount: int64(e.Messages), Model: e.Model, ParentID: e.Parent,
		ForkMessageID: e.ForkMessage, Error: e.Error, Path: e.Path,
	}
	if current != "" && e.ID == current {
		yes := true
		info.Current = &yes
	}
	if e.ForkIndex != nil {
		i := int64(*e.ForkIndex)
		info.ForkIndex = &i
	}
	return info
}

// wireTime is t as the wire writes times: UTC, RFC 3339, with a Z.
func wireTime(t time.Time) wire.Time { return t.UTC().Format(time.RFC3339Nano) }
