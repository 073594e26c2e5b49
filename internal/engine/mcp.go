package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/sdk/wire"
)

// MCPServer is one MCP (Model Context Protocol) server whose tools the
// model is offered as mcp__<server>__<tool> (docs/mcp.md), in the same
// shape in every door: the SDK's Config, `zot rpc`'s mcp_add, the
// mcp.json files, ACP's mcpServers.
type MCPServer = mcphost.Server

// MCPOptions tune the MCP servers of a session and name the files to
// load them from. The zero value is usable.
type MCPOptions struct {
	// Files are {"mcpServers": {...}} JSON files (the shape other agents
	// use) whose servers are added, in order, a later file and then
	// SessionConfig.MCPServers winning per name. A file that cannot be
	// read or parsed fails NewSession.
	Files []string
	// Discover also adds the servers of the zot home's mcp.json
	// (ExtensionConfig.Home) and of the project's .zot/mcp.json, under
	// Files; the project's only in a folder the user trusts (the rule of
	// ExtensionConfig.Discover). A broken file found so is reported and
	// skipped.
	Discover bool
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
	// crash, a restart), stamped with the session's seq. It is called with
	// the session's stamping lock held and must not block. Nil drops them.
	// (The Go SDK calls it; the other doors take the session's notices
	// through SetNoticeSink.)
	OnEvent func(wire.Event)
}

// startMCP adds the servers the configuration names: the discovered ones,
// then the files', then SessionConfig.MCPServers, a later one winning per
// name. Nothing is attached when there are none.
func (p *plugins) startMCP(servers []MCPServer) error {
	o := p.mcpCfg
	var list []mcphost.Server
	if o.Discover {
		homeFile := ""
		if h := p.extCfg.Home; h != "" {
			homeFile = home.Home{Dir: h}.MCPConfig()
		}
		found, problems, untrusted := mcphost.DiscoverTrusted(p.sess.cwd, homeFile, p.gate)
		if untrusted != nil && p.gate.FirstReport(*untrusted) {
			n := exthost.TrustNotice(*untrusted)
			fmt.Fprintf(p.log, "zot: %s\n", n.Message)
			p.notices.push(n.Event(), true)
		}
		for _, e := range problems {
			fmt.Fprintf(p.log, "zot: %v (its servers are skipped)\n", e)
		}
		list = found
	}
	for _, f := range o.Files {
		more, err := mcphost.LoadFile(f)
		if err != nil {
			return err
		}
		list = mcphost.Merge(list, more)
	}
	for _, s := range servers {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	list = mcphost.Merge(list, servers)
	if len(list) == 0 {
		return nil
	}
	return p.addMCP(context.Background(), list)
}

// manager returns the MCP manager, made when the first server is added,
// so a session without servers pays nothing for them.
func (p *plugins) manager(create bool) (*mcphost.Manager, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mcp != nil || !create {
		return p.mcp, nil
	}
	if p.stopped {
		return nil, ErrClosed
	}
	o := p.mcpCfg
	p.mcp = mcphost.New(p.sess, mcphost.Config{
		Log:           p.log,
		Notify:        func(n mcphost.Notice) { p.notices.push(n.Event(), true) }, // the manager logs each
		StartTimeout:  o.StartTimeout,
		CallTimeout:   o.CallTimeout,
		LogDir:        o.LogDir,
		Deferred:      !p.launched,
		ClientName:    "zot",
		ClientVersion: buildinfo.Version(),
	})
	return p.mcp, nil
}

// addMCP adds list to the manager, making it first if need be.
func (p *plugins) addMCP(ctx context.Context, list []mcphost.Server) error {
	m, err := p.manager(true)
	if err != nil {
		return err
	}
	if err := m.AddServers(ctx, list); err != nil {
		if errors.Is(err, mcphost.ErrClosed) {
			return ErrClosed
		}
		return err
	}
	return nil
}

// AddMCPServers adds MCP servers; one with the name of a server already
// present replaces it. They start in the background at once (unless held
// back: SessionConfig.DeferStart); their tools are offered from the next
// model call after they are ready. It is never refused while work runs.
// It fails, adding nothing, with an *MCPServerError when a server is not
// usable (no name, neither or both of Command and URL, a bad Type or URL,
// a name given twice), and with ErrClosed once the session is closed.
func (s *Session) AddMCPServers(ctx context.Context, servers []MCPServer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, srv := range servers {
		if err := srv.Validate(); err != nil {
			return &MCPServerError{Err: err}
		}
	}
	err := s.plug.addMCP(ctx, servers)
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
		return &MCPServerError{Err: err}
	}
	return err
}

// MCPServerError says an MCP server given to AddMCPServers is not usable.
type MCPServerError struct{ Err error }

// Error returns the message of the MCPServerError.
func (e *MCPServerError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *MCPServerError) Unwrap() error { return e.Err }

// ErrorCode returns invalid_params: the caller's to change.
func (e *MCPServerError) ErrorCode() wire.ErrorCode { return wire.CodeInvalidParams }

// RemoveMCPServer removes an MCP server: its tools are no longer offered
// from the next model call on, and it is stopped once its running calls
// have ended. It fails with an error wrapping ErrNotFound when the
// session has no server of that name.
func (s *Session) RemoveMCPServer(name string) error {
	m, err := s.plug.manager(false)
	if err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("%w: no MCP server named %q", ErrNotFound, name)
	}
	if err := m.Remove(name); err != nil {
		switch {
		case errors.Is(err, mcphost.ErrUnknownServer):
			return fmt.Errorf("%w: no MCP server named %q", ErrNotFound, name)
		case errors.Is(err, mcphost.ErrClosed):
			return ErrClosed
		}
		return err
	}
	return nil
}

// MCPServers lists the session's MCP servers, sorted by name, with their
// status and the names the model sees for their tools (as mcp_list
// does). It starts servers held back.
func (s *Session) MCPServers() []wire.MCPServerInfo {
	m, _ := s.plug.manager(false)
	if m == nil {
		return []wire.MCPServerInfo{}
	}
	return mcphost.Wire(m.List())
}

// WaitMCP waits until every MCP server is ready or has failed, at most
// MCPOptions.StartTimeout after each was added, or until ctx ends: what
// a prompt does before its first model call.
func (s *Session) WaitMCP(ctx context.Context) {
	if m, _ := s.plug.manager(false); m != nil {
		m.WaitReady(ctx)
	}
}

// mcpCount is the number of MCP servers for State: nil while the session
// never had one.
func (p *plugins) mcpCount() *int64 {
	m, _ := p.manager(false)
	if m == nil {
		return nil
	}
	n := int64(m.Count())
	return &n
}

// mcpSpecs returns the configurations of the session's MCP servers.
func (s *Session) mcpSpecs() []MCPServer {
	m, _ := s.plug.manager(false)
	if m == nil {
		return nil
	}
	return m.Specs()
}
