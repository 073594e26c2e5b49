package acpserver

import (
	"context"
	"strconv"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/mcphost"
)

// mcpServers converts ACP's mcpServers to the engine's, checked; a
// server that does not fit is an invalid_params error naming it.
func (a *Agent) mcpServers(list []acp.McpServer) ([]mcphost.Server, error) {
	out := make([]mcphost.Server, 0, len(list))
	for i, m := range list {
		var s mcphost.Server
		switch {
		case m.Stdio != nil:
			s = mcphost.Server{Name: m.Stdio.Name, Type: mcphost.TransportStdio, Command: m.Stdio.Command, Args: m.Stdio.Args}
			if len(m.Stdio.Env) > 0 {
				s.Env = make(map[string]string, len(m.Stdio.Env))
				for _, e := range m.Stdio.Env {
					s.Env[e.Name] = e.Value
				}
			}
		case m.HTTP != nil:
			s = mcphost.Server{Name: m.HTTP.Name, Type: mcphost.TransportHTTP, URL: m.HTTP.URL, Headers: headers(m.HTTP.Headers)}
		case m.SSE != nil:
			s = mcphost.Server{Name: m.SSE.Name, Type: mcphost.TransportSSE, URL: m.SSE.URL, Headers: headers(m.SSE.Headers)}
		}
		if err := s.Validate(); err != nil {
			return nil, a.errorOf(err, "", "mcpServers["+strconv.Itoa(i)+"]")
		}
		out = append(out, s)
	}
	return out, nil
}

// headers turns ACP's header list into a map.
func headers(list []acp.HttpHeader) map[string]string {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]string, len(list))
	for _, h := range list {
		out[h.Name] = h.Value
	}
	return out
}

// startMCP adds the session's MCP servers; they start in the background
// and their tools join from the next model call (the first prompt waits
// for servers still starting, a bounded time).
func (s *acpSession) startMCP(servers []engine.MCPServer) error {
	if len(servers) == 0 {
		return nil
	}
	if err := s.eng.AddMCPServers(context.Background(), servers); err != nil {
		// Not named by the session: the request that opened it fails.
		return s.agent.errorOf(err, "", "mcpServers")
	}
	return nil
}
