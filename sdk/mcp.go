package sdk

import (
	"context"
	"errors"
	"fmt"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// MCPServer is one MCP (Model Context Protocol) server whose tools the
// model is offered as mcp__<server>__<tool> (docs/mcp.md): the one shape
// every door takes. Give Command (with Args, Env, CWD) for a stdio
// server, or URL (with Headers) for a streamable HTTP one; Type "sse"
// reaches a legacy HTTP+SSE server. Name names it, unique in the Runtime;
// CWD is relative to Config.CWD; Timeout bounds one tool call (0 means
// MCPOptions.CallTimeout).
type MCPServer = engine.MCPServer

// MCPOptions tune the MCP servers of a Runtime (StartTimeout,
// CallTimeout, LogDir, OnEvent) and name mcpServers files to load
// (Files). The zero value is usable.
type MCPOptions = engine.MCPOptions

// AddMCPServers adds MCP servers, each an MCPServer or a wire.MCPServer
// (mcp_add's form, as rpcclient takes it too); one with the name of a
// server already present replaces it. They start in the background at
// once; their tools are offered from the next model call after they are
// ready. It is never refused while a prompt runs. It fails, adding
// nothing, when a server is not usable (no name, neither or both of
// Command and URL, a bad Type or URL), and with ErrClosed after Close.
func (r *Runtime) AddMCPServers(ctx context.Context, servers ...client.MCPServer) error {
	if r.isClosed() {
		return ErrClosed
	}
	list := make([]MCPServer, len(servers))
	for i, s := range servers {
		if m, ok := s.(MCPServer); ok {
			list[i] = m
			continue
		}
		m, err := mcphost.FromWire(s.WireMCPServer())
		if err != nil {
			return fmt.Errorf("zot: %w", err)
		}
		list[i] = m
	}
	err := r.sess.AddMCPServers(ctx, list)
	var bad *engine.MCPServerError
	if errors.As(err, &bad) {
		return fmt.Errorf("zot: %w", err)
	}
	return r.mapErr(err)
}

// RemoveMCPServer removes an MCP server: its tools are no longer offered
// from the next model call on, and it is stopped once its running calls
// have ended. It fails with an error wrapping ErrNotFound when there is no
// server of that name.
func (r *Runtime) RemoveMCPServer(ctx context.Context, name string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	return r.mapErr(r.sess.RemoveMCPServer(name))
}

// MCPServers lists the MCP servers, sorted by name, with their status
// and the names the model sees for their tools (as mcp_list does).
func (r *Runtime) MCPServers(ctx context.Context) ([]wire.MCPServerInfo, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	return r.sess.MCPServers(), nil
}

// WaitMCP waits until every MCP server is ready or has failed, at most
// MCPOptions.StartTimeout after each was added, or until ctx ends: what a
// prompt does before its first model call.
func (r *Runtime) WaitMCP(ctx context.Context) { r.sess.WaitMCP(ctx) }
