package rpcclient

import (
	"context"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// MCPServers lists zot's MCP servers, sorted by name, with their status
// and the names the model sees for their tools (mcp_list).
func (c *Client) MCPServers(ctx context.Context) ([]wire.MCPServerInfo, error) {
	r, err := call[wire.MCPServersResult](ctx, c, &wire.MCPListCommand{})
	if err != nil {
		return nil, err
	}
	return r.Servers, nil
}

// AddMCPServers adds MCP servers (mcp_add), each a wire.MCPServer or an
// sdk.MCPServer; one with the name of a server already present replaces
// it. They start in the background; their tools are offered from the
// next model call after they are ready. It is never refused while a
// prompt runs. It fails with wire.CodeInvalidParams, adding nothing,
// when a server is not usable.
func (c *Client) AddMCPServers(ctx context.Context, servers ...client.MCPServer) error {
	list := make([]wire.MCPServer, len(servers))
	for i, s := range servers {
		list[i] = s.WireMCPServer()
	}
	_, err := call[wire.MCPServersResult](ctx, c, &wire.MCPAddCommand{Servers: list})
	return err
}

// RemoveMCPServer removes an MCP server (mcp_remove): its tools are no
// longer offered from the next model call on, and it is stopped once its
// running calls have ended. It fails with wire.CodeNotFound when no
// server has that name.
func (c *Client) RemoveMCPServer(ctx context.Context, name string) error {
	_, err := call[wire.MCPServersResult](ctx, c, &wire.MCPRemoveCommand{Name: name})
	return err
}
