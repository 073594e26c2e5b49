package rpcserver

import (
	"context"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// dispatchSessions answers the commands of the session store
// (list_sessions, load_session, fork_session) through the engine; it
// reports false for any other command. The store is opened at the first
// of them, so a client that uses none pays nothing for it.
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
		list, err := s.sess.ListStored(ctx, st, c.CWD)
		if err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, wire.SessionsResult{Sessions: list})
	case *wire.LoadSessionCommand:
		info, err := s.sess.LoadStored(ctx, st, c.SessionID)
		if err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, wire.LoadSessionResult{Session: info})
	case *wire.ForkSessionCommand:
		at, err := engine.ForkPointOf(c.AtIndex, c.AtMessageID)
		if err != nil {
			s.failErr(id, typ, err)
			return true
		}
		res, err := s.sess.ForkStored(ctx, st, c.SessionID, at, c.Load == nil || *c.Load)
		if err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, res)
	}
	return true
}
