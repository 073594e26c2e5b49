package acpserver

import (
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/sdk/wire"
)

// undo serves _zot/session/undo: the engine's Session.Undo.
func (h *conn) undo(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionUndoRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	turn := 0
	if p.Turn != nil {
		if *p.Turn < 1 {
			return jsonrpc.Fail(withSession(jsonrpc.InvalidParams("turn", "turn must be 1 or more"), p.SessionID))
		}
		turn = int(*p.Turn)
	}
	res, err := s.eng.Undo(turn)
	if err != nil {
		if wire.CodeOf(err) == wire.CodeNotFound {
			return jsonrpc.Fail(withSession(jsonrpc.InvalidParams("turn", "%v", err), p.SessionID))
		}
		return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, ""))
	}
	out := acp.SessionUndoResponse{Turn: res.Turn, MessageCount: res.MessageCount, Files: make([]acp.UndoneFile, 0, len(res.Files))}
	for _, f := range res.Files {
		uf := acp.UndoneFile{Path: f.Path, Action: string(f.Action)}
		if f.Reason != "" {
			r := f.Reason
			uf.Reason = &r
		}
		out.Files = append(out.Files, uf)
	}
	if res.BranchID != "" {
		b := res.BranchID
		out.BranchID = &b
	}
	return jsonrpc.Result(out)
}
