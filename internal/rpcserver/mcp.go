package rpcserver

import (
	"context"
	"fmt"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/wire"
)

// dispatchMCP answers the MCP commands (mcp_list, mcp_add, mcp_remove)
// with the session's MCP servers; it reports false for any other command.
// None is refused as busy: changes reach the model at its next call.
func (s *Server) dispatchMCP(cmd wire.Command) bool {
	id, typ := cmd.GetID(), cmd.Type()
	switch c := cmd.(type) {
	case *wire.MCPListCommand:
		s.respond(id, typ, wire.MCPServersResult{Servers: s.sess.MCPServers()})
	case *wire.MCPAddCommand:
		list := make([]engine.MCPServer, 0, len(c.Servers))
		for i, w := range c.Servers {
			srv, err := mcphost.FromWire(w)
			if err != nil {
				s.failErr(id, typ, fmt.Errorf("servers[%d]: %w", i, err)) // invalid_params
				return true
			}
			list = append(list, srv)
		}
		if err := s.sess.AddMCPServers(context.Background(), list); err != nil {
			s.failErr(id, typ, err) // invalid_params for a server that is not usable
			return true
		}
		s.respond(id, typ, wire.MCPServersResult{Servers: s.sess.MCPServers()})
	case *wire.MCPRemoveCommand:
		if err := s.sess.RemoveMCPServer(c.Name); err != nil {
			s.failErr(id, typ, err) // not_found for a server the session does not have
			return true
		}
		s.respond(id, typ, wire.MCPServersResult{Servers: s.sess.MCPServers()})
	default:
		return false
	}
	return true
}
