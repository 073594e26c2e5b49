package wire

// WireMCPServer returns s: the wire's shape of an MCP server is itself,
// so an MCPServer is what client.Client's AddMCPServers takes.
func (s MCPServer) WireMCPServer() MCPServer { return s }
