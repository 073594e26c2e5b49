// Package mcphost connects a session to MCP (Model Context Protocol)
// servers through the official Go SDK: it starts each server (a stdio
// child, a streamable HTTP or a legacy SSE endpoint), offers its tools to
// the model as mcp__<server>__<tool>, runs the model's calls of them, and
// keeps the servers' life cycle: a concurrent start the first prompt waits
// for (a bounded time), a crash that fails calls at once and a restart at
// the next prompt (a bounded number of times), a refresh when a server says
// its tools changed, and a shutdown that leaves no process behind.
//
// One Manager serves one session (see docs/mcp.md).
package mcphost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/sdk/wire"
)

// Defaults of the durations and counts of a Config left zero.
const (
	DefaultStartTimeout   = 10 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	DefaultMaxRestarts    = 3
	// DefaultRefreshTimeout bounds fetching a server's tools again after it
	// said they changed.
	DefaultRefreshTimeout = 5 * time.Second
)

// Session is what the Manager needs of a session; *engine.Session has it.
type Session interface {
	Tools() *agent.ToolSet
	Interceptors() *agent.Chain
	CWD() string
}

// Config configures a Manager. Zero durations and counts take the
// defaults.
type Config struct {
	// Log gets one line for each problem worth a person's attention (a
	// server that fails to start or crashes, a renamed tool); nil discards
	// them.
	Log io.Writer
	// Notify receives notices for the user: a server the prompt did not
	// wait for, a crash, a restart. It is called from the Manager's
	// goroutines (or the prompt's) and must not block. Nil drops them.
	Notify func(Notice)
	// StartTimeout bounds how long a prompt waits for servers still
	// starting, counted from when each was added or restarted. Default
	// 10 s.
	StartTimeout time.Duration
	// ConnectTimeout bounds one start: spawning or connecting, initialize
	// and the first tools/list. Default 30 s.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call of a server that sets no timeout
	// of its own. Default 60 s.
	CallTimeout time.Duration
	// MaxRestarts bounds the restarts of one crashed server per session.
	// Default 3; negative means none.
	MaxRestarts int
	// Deferred holds the servers AddServers is given until Launch (or a
	// prompt, or List) starts them, so that a door answers its first
	// command before they compete with it for the machine.
	Deferred bool
	// ClientName and ClientVersion are told to servers in initialize.
	// Defaults "zot" and "dev".
	ClientName, ClientVersion string
	// LogDir, when set, gets each stdio server's stderr, appended to
	// mcp-<name>.log (the name sanitised as in tool names), and zot's
	// notes about its stdout; the file is kept under boundlog.FileCap
	// with one .1 backup. Empty keeps only its last lines, for the error
	// a crash reports.
	LogDir string
	// StdinGrace and TermGrace are the steps of a stdio server's shutdown
	// ladder: how long it has to exit once its stdin is closed, then after
	// SIGTERM before SIGKILL. Defaults 2 s and 1 s.
	StdinGrace, TermGrace time.Duration
}

func (c *Config) defaults() {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&c.StartTimeout, DefaultStartTimeout)
	set(&c.ConnectTimeout, DefaultConnectTimeout)
	set(&c.CallTimeout, DefaultCallTimeout)
	set(&c.StdinGrace, 2*time.Second)
	set(&c.TermGrace, time.Second)
	switch {
	case c.MaxRestarts == 0:
		c.MaxRestarts = DefaultMaxRestarts
	case c.MaxRestarts < 0:
		c.MaxRestarts = 0
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.ClientName == "" {
		c.ClientName = "zot"
	}
	if c.ClientVersion == "" {
		c.ClientVersion = "dev"
	}
}

// Notice is something the user should hear about a server.
type Notice struct {
	Server string
	// Level is "info", "warn" or "error".
	Level   string
	Message string
}

// Source is the notice's source on the wire: mcp:<server>.
func (n Notice) Source() string { return "mcp:" + n.Server }

// Event returns the notice's wire form: an ext_notify whose source (and
// extension, for clients that read only that) is mcp:<server>.
func (n Notice) Event() *wire.ExtNotifyEvent {
	src := n.Source()
	return &wire.ExtNotifyEvent{Extension: src, Source: src, Level: n.Level, Message: n.Message}
}

// Status of a server.
const (
	StatusStarting = "starting"
	StatusReady    = "ready"
	StatusFailed   = "failed"
	StatusCrashed  = "crashed"
	StatusStopped  = "stopped"
)

// ServerInfo describes one server.
type ServerInfo struct {
	Name string
	// Transport is stdio, http or sse.
	Transport string
	// Status is starting, ready, failed, crashed or stopped.
	Status string
	// Error says why a failed or crashed server is not running.
	Error string
	// Tools are the names the model sees, in the server's order.
	Tools []string
	// Restarts counts the restarts after crashes.
	Restarts int
	// ServerName and ServerVersion are what the server said in
	// initialize, when it got that far.
	ServerName, ServerVersion string
}

// Wire returns list in its wire form.
func Wire(list []ServerInfo) []wire.MCPServerInfo {
	out := make([]wire.MCPServerInfo, 0, len(list))
	for _, s := range list {
		out = append(out, wire.MCPServerInfo{
			Name:          s.Name,
			Transport:     s.Transport,
			Status:        s.Status,
			Error:         s.Error,
			Tools:         append([]string{}, s.Tools...),
			Restarts:      int64(s.Restarts),
			ServerName:    s.ServerName,
			ServerVersion: s.ServerVersion,
		})
	}
	return out
}

// Errors of the Manager's calls.
var (
	// ErrUnknownServer: no server of that name.
	ErrUnknownServer = wire.Sentinel(wire.CodeNotFound, "no MCP server of that name")
	// ErrClosed: the Manager was closed.
	ErrClosed = errors.New("the MCP manager is closed")
)

// orderGate places the gate before every other interceptor: it waits for
// the servers before anything else sees the turn.
const orderGate = -1<<30 + 1

// Manager runs the MCP servers of one session. Its methods are safe for
// concurrent use.
type Manager struct {
	cfg  Config
	sess Session

	progress progressTable
	wg       sync.WaitGroup // every goroutine of the Manager

	// pubMu serialises publishing the tool names to the tool set; it
	// guards published, the tool sources the Manager has set.
	pubMu     sync.Mutex
	published map[string]bool

	mu       sync.Mutex
	servers  map[string]*server
	order    []*server // every server ever added and not yet stopped, for publishing
	launched bool
	closed   bool
	remove   func() // takes the gate out of the chain
}

// New attaches a Manager to sess. It starts nothing and adds one
// interceptor to the session's chain: the gate, which before each model
// call restarts crashed servers (at the first call of a prompt), fetches
// the tools of servers that said they changed, and waits for servers still
// starting (see Config.StartTimeout).
func New(sess Session, cfg Config) *Manager {
	cfg.defaults()
	m := &Manager{cfg: cfg, sess: sess, servers: map[string]*server{}, published: map[string]bool{}}
	m.progress.calls = map[string]func(string){}
	m.remove = sess.Interceptors().Add(agent.Interceptor{
		Name:       "mcp",
		Order:      orderGate,
		Timeout:    -1, // the gate bounds its own waits
		BeforeTurn: m.gate,
	})
	return m
}

// AddServers validates every server first (an invalid one, or two of one
// name: an error naming it, and nothing is added), then starts each,
// concurrently, in the background, and returns at once. A server with the
// name of one already present replaces it (the old one is stopped). A
// server's tools join the tool set when it is ready, so they are offered
// from the next model call on. ctx is only checked on entry: the servers
// live until Remove or Close.
func (m *Manager) AddServers(ctx context.Context, list []Server) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range list {
		if err := s.Validate(); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("MCP server %q is given twice", s.Name)
		}
		seen[s.Name] = true
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	var old []*server
	var fresh []*server
	for _, spec := range list {
		if prev := m.servers[spec.Name]; prev != nil {
			old = append(old, prev)
			m.order = slices.DeleteFunc(m.order, func(x *server) bool { return x == prev })
		}
		s := newServer(m, spec)
		m.servers[spec.Name] = s
		m.order = append(m.order, s)
		fresh = append(fresh, s)
	}
	launch := m.launched || !m.cfg.Deferred
	if launch {
		m.launched = true
		for _, s := range fresh {
			s.begin()
		}
	}
	m.mu.Unlock()
	for _, spec := range list {
		if len(spec.Unset) > 0 {
			m.notify(Notice{Server: spec.Name, Level: "warn", Message: fmt.Sprintf(
				"MCP server %q: its configuration refers to environment variables that are not set (%s); they were replaced by nothing",
				spec.Name, strings.Join(spec.Unset, ", "))})
		}
	}
	for _, s := range old {
		m.retire(s)
	}
	if len(old) > 0 {
		m.publish()
	}
	return nil
}

// Launch starts the servers AddServers held back (see Config.Deferred).
// Only the first call does anything.
func (m *Manager) Launch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.launched || m.closed {
		return
	}
	m.launched = true
	for _, s := range m.order {
		s.begin()
	}
}

// Remove takes a server's tools out of the tool set at once (the next
// model call no longer offers them) and stops it in the background once
// its running calls have ended. It fails with ErrUnknownServer when there
// is none of that name.
func (m *Manager) Remove(name string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	s := m.servers[name]
	if s == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	delete(m.servers, name)
	m.order = slices.DeleteFunc(m.order, func(x *server) bool { return x == s })
	m.mu.Unlock()
	m.retire(s)
	m.publish()
	return nil
}

// retire stops s in the background, once its running calls have ended.
func (m *Manager) retire(s *server) {
	s.markStopped()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		s.calls.Wait()
		s.shutdown()
	}()
}

// List describes the servers, sorted by name. It starts held-back servers
// (see Config.Deferred).
func (m *Manager) List() []ServerInfo {
	m.Launch()
	m.mu.Lock()
	list := slices.Collect(maps.Values(m.servers))
	m.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].spec.Name < list[j].spec.Name })
	out := make([]ServerInfo, 0, len(list))
	for _, s := range list {
		out = append(out, s.info())
	}
	return out
}

// Specs returns the configurations of the servers, sorted by name, as
// AddServers was given them.
func (m *Manager) Specs() []Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Server, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Count returns the number of servers.
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.servers)
}

// WaitReady waits as a prompt does: until every server is ready or has
// failed, at most StartTimeout after each was added or restarted, or until
// ctx ends. It starts held-back servers.
func (m *Manager) WaitReady(ctx context.Context) {
	m.Launch()
	m.await(ctx)
}

// Close stops every server (a stdio one by the ladder: close its stdin,
// SIGTERM its process group, SIGKILL it) and waits for all of them and
// every goroutine of the Manager. Later calls fail with ErrClosed. It is
// safe to call more than once.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return nil
	}
	m.closed = true
	list := slices.Collect(maps.Values(m.servers))
	m.servers = map[string]*server{}
	m.order = nil
	m.mu.Unlock()
	m.remove()
	for _, s := range list {
		s.markStopped()
	}
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.shutdown()
		}()
	}
	wg.Wait()
	m.wg.Wait()
	m.publish()
	return nil
}

// gate runs before each model call (see New).
func (m *Manager) gate(ctx context.Context, step int) agent.Verdict {
	m.Launch()
	m.mu.Lock()
	list := slices.Clone(m.order)
	m.mu.Unlock()
	if step == 1 {
		for _, s := range list {
			s.maybeRestart()
		}
	}
	for _, s := range list {
		s.refreshIfChanged(ctx)
	}
	m.await(ctx)
	return agent.Verdict{}
}

// await waits for the servers still starting, each at most StartTimeout
// after it was (re)started; one that misses it gets one notice.
func (m *Manager) await(ctx context.Context) {
	m.mu.Lock()
	list := slices.Clone(m.order)
	m.mu.Unlock()
	for _, s := range list {
		ready, deadline := s.startState()
		if ready == nil {
			continue
		}
		select {
		case <-ready:
			continue
		default:
		}
		wait := time.Until(deadline)
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ready:
				t.Stop()
				continue
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		s.late()
	}
}

// publish gives every server's tools their names and puts them in the
// tool set: servers by name, then tools in the server's order, the first
// to ask for a name keeping it (see assignNames).
func (m *Manager) publish() {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	m.mu.Lock()
	list := slices.Clone(m.order)
	closed := m.closed
	m.mu.Unlock()
	slices.SortFunc(list, func(a, b *server) int { return strings.Compare(a.spec.Name, b.spec.Name) })
	taken := map[string]bool{}
	live := map[string]bool{}
	var set []agent.SourceTools
	for _, s := range list {
		if closed {
			break
		}
		live[s.source()] = true
		set = append(set, agent.SourceTools{Source: s.source(), Tools: s.named(taken)})
	}
	// The sources of servers no longer present go in the same change, so
	// that a name one server gives up and another takes is never seen
	// taken twice.
	var drop []string
	for src := range m.published {
		if !live[src] {
			drop = append(drop, src)
			delete(m.published, src)
		}
	}
	m.sess.Tools().SetSources(set, drop)
	for src := range live {
		m.published[src] = true
	}
}

// notify hands a notice on and logs it.
func (m *Manager) notify(n Notice) {
	fmt.Fprintf(m.cfg.Log, "zot: mcp %s: %s\n", n.Server, n.Message)
	if m.cfg.Notify != nil {
		m.cfg.Notify(n)
	}
}

// progressTable routes progress notifications to the call that asked
// for them, by token.
type progressTable struct {
	mu    sync.Mutex
	next  uint64
	calls map[string]func(string)
}

// add registers fn and returns its token and the function that removes
// it.
func (p *progressTable) add(fn func(string)) (token string, remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	token = fmt.Sprintf("zot-%d", p.next)
	p.calls[token] = fn
	return token, func() {
		p.mu.Lock()
		delete(p.calls, token)
		p.mu.Unlock()
	}
}

// deliver hands text to the call of token, if it still runs.
func (p *progressTable) deliver(token any, text string) {
	key := fmt.Sprint(token)
	p.mu.Lock()
	fn := p.calls[key]
	p.mu.Unlock()
	if fn != nil {
		fn(text)
	}
}
