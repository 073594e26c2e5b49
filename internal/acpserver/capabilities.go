package acpserver

import (
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
)

// zotCapabilities serves _zot/capabilities: what this zot and a session
// (or the sessions it makes) support, as zot rpc's get_capabilities.
func (h *conn) zotCapabilities(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.CapabilitiesRequest
	if err := decode(req, &p); err != nil {
		return jsonrpc.Fail(err)
	}
	provider := h.agent.opts.Defaults.Provider
	if p.SessionID != nil {
		s, err := h.openSession(*p.SessionID)
		if err != nil {
			return jsonrpc.Fail(err)
		}
		provider = s.eng.Provider()
	}
	c := engine.Capabilities(provider)
	return jsonrpc.Result(acp.CapabilitiesResponse{
		Provider:  c.Provider,
		Providers: c.Providers,
		Doors:     c.Doors,
		Features:  c.Features,
		Limits:    acp.CapabilityLimits{MaxSteps: c.Limits.MaxSteps, MaxOutputRetries: c.Limits.MaxOutputRetries},
	})
}
