package sdk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/wire"
)

// MCPServer is one MCP (Model Context Protocol) server whose tools the
// model is offered as mcp__<server>__<tool> (docs/mcp.md). Give Command
// (with Args, Env, CWD) for a stdio server, or URL (with Headers) for a
// streamable HTTP one; Type "sse" reaches a legacy HTTP+SSE server.
type MCPServer struct {
	// Name names the server, unique in the Runtime.
	Name string
	// Type is "", "stdio", "http" or "sse"; "" means stdio when Command
	// is set and http when URL is.
	Type string
	// Command is a stdio server's program, looked up in PATH; Args are
	// its arguments.
	Command string
	Args    []string
	// Env is added to the process's environment for the program.
	Env map[string]string
	// CWD is the program's working directory, relative to Config.CWD;
	// empty means Config.CWD.
	CWD string
	// URL is an http or sse server's endpoint; Headers are sent with
	// every request to it.
	URL     string
	Headers map[string]string
	// Timeout bounds one tool call; 0 means MCPOptions.CallTimeout.
	Timeout time.Duration
}

// MCPOptions tune the MCP servers of a Runtime. The zero value is
// usable.
type MCPOptions struct {
	// Files are {"mcpServers": {...}} JSON files (the shape other agents
	// use) whose servers are added, in order, a later file and then
	// Config.MCPServers winning per name.
	Files []string
	// StartTimeout bounds how long a prompt waits for servers still
	// starting; 0 means 10 s. A server that misses it joins when it is
	// ready, and OnEvent hears of it.
	StartTimeout time.Duration
	// CallTimeout bounds one tool call of a server that sets none; 0
	// means 60 s.
	CallTimeout time.Duration
	// LogDir, when set, gets each stdio server's stderr, appended to
	// mcp-<name>.log, kept under 8 MiB with one .1 backup; empty drops
	// it (the last line still explains a crash).
	LogDir string
	// OnEvent receives notices about the servers at any time:
	// *wire.ExtNotifyEvent with Source "mcp:<server>" (a late start, a
	// crash, a restart). It is called from the servers' goroutines and
	// must not block. Nil drops them.
	OnEvent func(Event)
}

// mcpState is the Runtime's MCP manager, made when the first server is
// added, so a Runtime without servers pays nothing for them.
type mcpState struct {
	mu   sync.Mutex
	opts MCPOptions
	m    *mcphost.Manager
}

// startMCP adds the servers of cfg's files and of cfg.MCPServers.
func (r *Runtime) startMCP(cfg Config) error {
	r.mcp.opts = cfg.MCP
	var list []mcphost.Server
	for _, f := range cfg.MCP.Files {
		more, err := mcphost.LoadFile(f)
		if err != nil {
			return fmt.Errorf("zot: %w", err)
		}
		list = mcphost.Merge(list, more)
	}
	direct, err := toMCPHost(cfg.MCPServers)
	if err != nil {
		return err
	}
	list = mcphost.Merge(list, direct)
	if len(list) == 0 {
		return nil
	}
	return r.addMCP(context.Background(), list)
}

// toMCPHost converts and checks servers.
func toMCPHost(servers []MCPServer) ([]mcphost.Server, error) {
	out := make([]mcphost.Server, 0, len(servers))
	for _, s := range servers {
		hs := mcphost.Server{Name: s.Name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env, CWD: s.CWD, URL: s.URL, Headers: s.Headers, Timeout: s.Timeout}
		if err := hs.Validate(); err != nil {
			return nil, fmt.Errorf("zot: %w", err)
		}
		out = append(out, hs)
	}
	return out, nil
}

// addMCP adds list to the manager, making it first if need be.
func (r *Runtime) addMCP(ctx context.Context, list []mcphost.Server) error {
	r.mcp.mu.Lock()
	if r.mcp.m == nil {
		opts := r.mcp.opts
		cfg := mcphost.Config{
			StartTimeout:  opts.StartTimeout,
			CallTimeout:   opts.CallTimeout,
			LogDir:        opts.LogDir,
			ClientName:    "zot",
			ClientVersion: buildinfo.Version(),
		}
		if f := opts.OnEvent; f != nil {
			cfg.Notify = func(n mcphost.Notice) { f(n.Event()) }
		}
		r.mcp.m = mcphost.New(r.sess, cfg)
	}
	m := r.mcp.m
	r.mcp.mu.Unlock()
	if err := m.AddServers(ctx, list); err != nil {
		if errors.Is(err, mcphost.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("zot: %w", err)
	}
	return nil
}

// manager returns the MCP manager, or nil when no server was ever added.
func (r *Runtime) manager() *mcphost.Manager {
	r.mcp.mu.Lock()
	defer r.mcp.mu.Unlock()
	return r.mcp.m
}

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
	if err := ctx.Err(); err != nil {
		return err
	}
	list, err := toMCPHost(servers)
	if err != nil {
		return err
	}
	return r.addMCP(ctx, list)
}

// RemoveMCPServer removes an MCP server: its tools are no longer offered
// from the next model call on, and it is stopped once its running calls
// have ended. It fails with an error wrapping ErrNotFound when there is no
// server of that name.
func (r *Runtime) RemoveMCPServer(ctx context.Context, name string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	m := r.manager()
	if m == nil {
		return fmt.Errorf("%w: no MCP server named %q", ErrNotFound, name)
	}
	if err := m.Remove(name); err != nil {
		if errors.Is(err, mcphost.ErrUnknownServer) {
			return fmt.Errorf("%w: no MCP server named %q", ErrNotFound, name)
		}
		return fmt.Errorf("zot: %w", err)
	}
	return nil
}

// MCPServers lists the MCP servers, sorted by name, with their status
// and the names the model sees for their tools (as mcp_list does).
func (r *Runtime) MCPServers(ctx context.Context) ([]wire.MCPServerInfo, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	m := r.manager()
	if m == nil {
		return []wire.MCPServerInfo{}, nil
	}
	return mcphost.Wire(m.List()), nil
}

// WaitMCP waits until every MCP server is ready or has failed, at most
// MCPOptions.StartTimeout after each was added, or until ctx ends: what a
// prompt does before its first model call.
func (r *Runtime) WaitMCP(ctx context.Context) {
	if m := r.manager(); m != nil {
		m.WaitReady(ctx)
	}
}

// mcpCount is the number of MCP servers, for State.
func (r *Runtime) mcpCount() *int64 {
	m := r.manager()
	if m == nil {
		return nil
	}
	n := int64(m.Count())
	return &n
}

// stopMCP stops every MCP server by its shutdown ladder.
func (r *Runtime) stopMCP() {
	r.mcp.mu.Lock()
	m := r.mcp.m
	r.mcp.mu.Unlock()
	if m != nil {
		m.Close()
	}
}
