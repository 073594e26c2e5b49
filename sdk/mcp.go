package sdk

import (
	"context"
	"errors"
	"fmt"

	"zot.dev/zot/internal/engine"
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

// AddMCPServers adds MCP servers; one with the name of a server already
// present replaces it. They start in the background at once; their tools
// are offered from the next model call after they are ready. It is never
// refused while a prompt runs. It fails, adding nothing, when a server is
// not usable (no name, neither or both of Command and URL, a bad Type or
// URL), and with ErrClosed after Close.
func (r *Runtime) AddMCPServers(ctx context.Context, servers ...MCPServer) error {
	if r.isClosed() {
		return ErrClosed
	}
	err := r.sess.AddMCPServers(ctx, servers)
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
