package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/tools"
)

// DefaultMCPIdle is how long a worker keeps an MCP server no call uses.
const DefaultMCPIdle = 10 * time.Minute

// MCPServers runs, on a worker holding the working directories, the MCP
// servers whose tools the turns call: one server per configuration and
// working directory, started at its first call (the sessions of one
// folder with the same configuration share it), restarted at a call
// after it crashed, stopped once unused for Idle and when the worker
// stops. Its methods are safe for concurrent use.
type MCPServers struct {
	// Log gets the servers' problems (a failed start, a crash).
	Log io.Writer
	// Idle is how long an unused server is kept; 0 means DefaultMCPIdle.
	Idle time.Duration
	// ClientVersion is told to the servers in initialize.
	ClientVersion string

	mu      sync.Mutex
	running map[string]*mcpServer
	closed  bool
	stop    chan struct{} // closed by Close: the sweeper ends
	wg      sync.WaitGroup
}

// mcpServer is one running server: what mcphost.Manager needs of a
// session (the tool set it publishes to, a chain for its gate, the
// folder), and who uses it.
type mcpServer struct {
	m     *mcphost.Manager
	set   *agent.ToolSet
	chain *agent.Chain
	cwd   string
	busy  int       // calls using it (under MCPServers.mu)
	last  time.Time // when the last call ended (under MCPServers.mu)
}

func (s *mcpServer) Tools() *agent.ToolSet      { return s.set }
func (s *mcpServer) Interceptors() *agent.Chain { return s.chain }
func (s *mcpServer) CWD() string                { return s.cwd }

// mcpKey names a server by its configuration and folder.
func mcpKey(cwd string, spec mcphost.Server) string {
	data, _ := json.Marshal(struct {
		CWD  string
		Spec mcphost.Server
	}{cwd, spec})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Tool returns the tool name of the server spec in cwd, starting the
// server when none of its configuration runs there, and release, to
// call once the call has ended. Without the tool (the server did not
// start, or offers no tool of that name here) it returns why instead.
func (x *MCPServers) Tool(ctx context.Context, cwd string, spec mcphost.Server, name string) (t tools.Tool, release func(), why string) {
	key := mcpKey(cwd, spec)
	for try := 0; ; try++ {
		s, err := x.acquire(ctx, key, cwd, spec)
		if err != nil {
			return nil, nil, err.Error()
		}
		release = func() { x.release(s) }
		s.m.WaitReady(ctx)
		if ctx.Err() != nil {
			release()
			return nil, nil, ctx.Err().Error()
		}
		info := s.m.List()
		if len(info) == 1 && info[0].Status == mcphost.StatusCrashed && try == 0 {
			// A crashed server is started afresh, once, as a session's
			// next prompt restarts it.
			release()
			x.drop(key, s)
			continue
		}
		if t, ok := s.set.View().Lookup(name); ok {
			return t, release, ""
		}
		release()
		if len(info) == 1 && info[0].Status != mcphost.StatusReady {
			return nil, nil, fmt.Sprintf("MCP server %q is %s on this worker: %s", spec.Name, info[0].Status, info[0].Error)
		}
		return nil, nil, fmt.Sprintf("MCP server %q offers no tool %s on this worker", spec.Name, name)
	}
}

// acquire returns the server of key, started when there is none, counted
// busy.
func (x *MCPServers) acquire(ctx context.Context, key, cwd string, spec mcphost.Server) (*mcpServer, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, mcphost.ErrClosed
	}
	if x.running == nil {
		x.running = map[string]*mcpServer{}
		x.stop = make(chan struct{})
		x.wg.Add(1)
		go x.sweep()
	}
	s := x.running[key]
	if s == nil {
		set, err := agent.NewToolSet(nil, nil)
		if err != nil {
			return nil, err
		}
		s = &mcpServer{set: set, chain: new(agent.Chain), cwd: cwd}
		s.m = mcphost.New(s, mcphost.Config{Log: x.Log, ClientName: "zot", ClientVersion: x.ClientVersion})
		if err := s.m.AddServers(ctx, []mcphost.Server{spec}); err != nil {
			_ = s.m.Close()
			return nil, fmt.Errorf("MCP server %q: %w", spec.Name, err)
		}
		x.running[key] = s
	}
	s.busy++
	return s, nil
}

func (x *MCPServers) release(s *mcpServer) {
	x.mu.Lock()
	s.busy--
	s.last = time.Now()
	x.mu.Unlock()
}

// drop stops the server of key when it is still s; after Close, which
// stopped it, nothing.
func (x *MCPServers) drop(key string, s *mcpServer) {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	if x.running[key] == s {
		delete(x.running, key)
	}
	// Added under the lock Close takes before it waits: never after.
	x.wg.Add(1)
	x.mu.Unlock()
	go func() {
		defer x.wg.Done()
		_ = s.m.Close() // it waits for the calls still running
	}()
}

// sweep stops the servers unused for Idle, until Close.
func (x *MCPServers) sweep() {
	defer x.wg.Done()
	idle := x.Idle
	if idle <= 0 {
		idle = DefaultMCPIdle
	}
	tick := time.NewTicker(max(idle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-x.stop:
			return
		case now := <-tick.C:
			var old []*mcpServer
			x.mu.Lock()
			for key, s := range x.running {
				if s.busy == 0 && now.Sub(s.last) >= idle {
					delete(x.running, key)
					old = append(old, s)
				}
			}
			x.mu.Unlock()
			for _, s := range old {
				_ = s.m.Close()
			}
		}
	}
}

// Close stops every server and waits for them.
func (x *MCPServers) Close() {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		x.wg.Wait()
		return
	}
	x.closed = true
	list := x.running
	x.running = nil
	if x.stop != nil {
		close(x.stop)
	}
	x.mu.Unlock()
	for _, s := range list {
		_ = s.m.Close()
	}
	x.wg.Wait()
}
