package acpserver

import (
	"context"
	"encoding/json"
	"errors"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/store"
)

// fork serves _zot/session/fork: a new stored session from the messages
// of a stored one before one of its prompts. The session forked may be
// open, here or elsewhere: what its file holds is forked, and it is only
// read. The fork is not opened; the client loads it when it wants it.
func (h *conn) fork(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionForkRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	var at store.ForkPoint
	field := "atIndex"
	switch {
	case p.AtIndex != nil && p.AtMessageID != nil:
		return jsonrpc.Fail(jsonrpc.InvalidParams("atMessageId", "does not go with atIndex"))
	case p.AtIndex != nil:
		if *p.AtIndex < 0 {
			return jsonrpc.Fail(jsonrpc.InvalidParams("atIndex", "must not be negative"))
		}
		at = store.AtIndex(int(*p.AtIndex))
	case p.AtMessageID != nil:
		at, field = store.AtMessage(*p.AtMessageID), "atMessageId"
	}
	a := h.agent
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		if !store.ValidID(p.SessionID) || !a.stored(p.SessionID) || !h.may(p.SessionID) {
			return nil, appError(acp.ErrorKindUnknownSession, p.SessionID, "no session %q", p.SessionID)
		}
		f, err := a.store.Fork(ctx, p.SessionID, at)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, appError(acp.ErrorKindUnknownSession, p.SessionID, "no session %q", p.SessionID)
		case errors.Is(err, store.ErrNoForkPoint):
			return nil, withSession(jsonrpc.InvalidParams(field, "%s", err.Error()), p.SessionID)
		case err != nil:
			return nil, a.errorOf(err, p.SessionID, "")
		}
		msg, err := json.Marshal(agent.WireMessage(&f.Message))
		if err != nil {
			return nil, jsonrpc.Internal(err)
		}
		return acp.SessionForkResponse{
			SessionID: f.ID, ParentID: p.SessionID, AtIndex: int64(f.At), MessageID: f.MessageID,
			Message: msg, MessageCount: int64(f.Messages), Title: f.Title,
		}, nil
	})
}
