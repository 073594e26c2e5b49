package acpserver

import (
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
)

// sessionSandbox serves _zot/session/sandbox: reads the session's
// sandbox, or changes its mode or network as /jail and /unjail do.
func (h *conn) sessionSandbox(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionSandboxRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	var mode, network string
	if p.Mode != nil {
		mode = *p.Mode
	}
	if p.Network != nil {
		network = "off"
		if *p.Network {
			network = "on"
		}
	}
	if err := s.eng.SetSandbox(mode, network); err != nil {
		return jsonrpc.Fail(withSession(jsonrpc.InvalidParams("mode", "%v", err), p.SessionID))
	}
	return jsonrpc.Result(acp.SessionSandboxResponse{Sandbox: *s.status().Sandbox})
}
