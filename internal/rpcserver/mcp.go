package rpcserver

import (
	"context"
	"errors"
	"time"

	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/wire"
)

// mcpDoor is the door's side of the MCP servers: mcp_list, mcp_add,
// mcp_remove, the server count of get_state and the notices. The zero
// value serves without MCP servers (mcp_add then fails).
type mcpDoor struct {
	m      *mcphost.Manager
	launch *time.Timer // starts the servers held back (see ExtensionLaunchDelay)
}

// SetMCP gives the server the MCP manager of its session; call it before
// Serve. Its notices should reach MCPNotice. When the manager holds its
// servers back (mcphost.Config.Deferred), Serve starts them shortly after
// it starts, as it does the extensions, or at the first command that
// needs them.
func (s *Server) SetMCP(m *mcphost.Manager) { s.mcp.m = m }

// MCPNotice writes a notice about an MCP server as its event (ext_notify
// with source mcp:<server>). It is safe to call before Serve and from any
// goroutine, and never blocks.
func (s *Server) MCPNotice(n mcphost.Notice) { s.extEmit(n.Event()) }

// serveMCP starts the held-back servers shortly after Serve starts.
func (s *Server) serveMCP() {
	if s.mcp.m != nil {
		s.mcp.launch = time.AfterFunc(ExtensionLaunchDelay, s.mcp.m.Launch)
	}
}

// stopMCP stops the launch timer if it has not fired.
func (s *Server) stopMCP() {
	if s.mcp.launch != nil {
		s.mcp.launch.Stop()
	}
}

// state is get_state's answer: the session's, with the MCP server count.
func (s *Server) state() wire.StateResult {
	st := s.sess.State()
	if s.mcp.m != nil {
		n := int64(s.mcp.m.Count())
		st.McpServers = &n
	}
	return st
}

// dispatchMCP answers the MCP commands; it reports false for any other
// command. None is refused as busy: changes reach the model at its next
// call.
func (s *Server) dispatchMCP(cmd wire.Command) bool {
	id, typ := cmd.GetID(), cmd.Type()
	m := s.mcp.m
	switch c := cmd.(type) {
	case *wire.MCPListCommand:
		var list []mcphost.ServerInfo
		if m != nil {
			list = m.List()
		}
		s.respond(id, typ, wire.MCPServersResult{Servers: mcphost.Wire(list)})
	case *wire.MCPAddCommand:
		if m == nil {
			s.fail(id, typ, wire.CodeInternal, "this zot runs without MCP support")
			return true
		}
		list := make([]mcphost.Server, 0, len(c.Servers))
		for i, w := range c.Servers {
			srv, err := mcphost.FromWire(w)
			if err != nil {
				s.fail(id, typ, wire.CodeInvalidParams, "servers[%d]: %s", i, oneLine(err))
				return true
			}
			list = append(list, srv)
		}
		if err := m.AddServers(context.Background(), list); err != nil {
			code := wire.CodeInvalidParams
			if errors.Is(err, mcphost.ErrClosed) {
				code = wire.CodeInternal
			}
			s.fail(id, typ, code, "%s", oneLine(err))
			return true
		}
		s.respond(id, typ, wire.MCPServersResult{Servers: mcphost.Wire(m.List())})
	case *wire.MCPRemoveCommand:
		if m == nil {
			s.fail(id, typ, wire.CodeNotFound, "no MCP server named %q", c.Name)
			return true
		}
		if err := m.Remove(c.Name); err != nil {
			s.failErr(id, typ, err)
			return true
		}
		s.respond(id, typ, wire.MCPServersResult{Servers: mcphost.Wire(m.List())})
	default:
		return false
	}
	return true
}
