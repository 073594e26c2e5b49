// Package acpserver is the agent side of the Agent Client Protocol (v1)
// over zot's engine: the method handlers of the daemon (`zot daemon`,
// `zot acp`), one engine Session per ACP session, kept in a JSON Lines
// file per session under <ZOT_HOME>/sessions/.
//
// The transport (line framing, the writer goroutine of each connection,
// request correlation) is internal/jsonrpc's; this package is what a
// connection's Handler does with each message. docs/daemon.md is the
// user's side of it: methods, errors, ordering and the rule for several
// clients on one session.
//
// Ordering. Every update of a session goes through the session's own
// queue and one forwarder goroutine, which hands it to each connection
// that has the session open (Conn.Notify queues it behind every frame
// queued before it). A `session/prompt` is answered only after its turn's
// last update passed the forwarder, so every update of a turn precedes
// the answer; a `session/new` is answered before the session exists for
// any update. A slow client slows the sessions it has open (their queue
// fills and the engine waits in Work.Ready), never another session.
package acpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/boundlog"
	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/store"
)

// Permission policies of Options.Permission.
const (
	// PermissionAsk asks the client with session/request_permission
	// before each write, edit and bash call.
	PermissionAsk = "ask"
	// PermissionAllow runs every call without asking.
	PermissionAllow = "allow"
	// PermissionDeny refuses every write, edit and bash call.
	PermissionDeny = "deny"
)

// Options configure an Agent.
type Options struct {
	// Host is shared by every session. Required.
	Host *engine.Host
	// Defaults are the settings of new sessions (provider, model, step
	// limit, tools…); CWD, SessionFile and Approve are set per session.
	Defaults engine.SessionConfig
	// Permission is the policy for write, edit and bash: ask (the
	// default), allow or deny.
	Permission string
	// SessionsDir is the session store's folder (internal/store): one
	// <sessionId>.jsonl file per session, every door's. Required.
	SessionsDir string
	// Version is zot's version, shown in initialize and status.
	Version string
	// Log receives diagnostics; nil discards them.
	Log io.Writer
	// AuthMethods are the ways to authenticate that initialize
	// advertises (none when empty): for a provider that needs an API key,
	// one that names the variable to set.
	AuthMethods []acp.AuthMethod
	// ReconnectGrace is how long a turn whose prompt came from a client
	// of the network listener, and whose client has left, waits for a
	// client of the same principal to open the session again (a client
	// that reconnected and sent session/resume) to ask it a permission
	// question; the question is rejected when none comes. 0 rejects at
	// once, as for the daemon's own user, whose questions are never held.
	ReconnectGrace time.Duration
	// MaxSessions bounds the sessions one principal of the network
	// listener (a token's name; not the daemon's own user) has open at
	// once: session/new, load or resume of one more is refused with
	// limit_exceeded. 0 means no bound.
	MaxSessions int
	// Auth, when set, says whether the provider of new sessions can be
	// used: nil when it has its key, else why not. A request that needs
	// the model (session/new, a prompt, authenticate) is then answered
	// with ACP's auth-required error (-32000, kind auth_required) and
	// that text; the rest (session/list, history, …) is served.
	Auth func() error
}

// Agent serves the Agent Client Protocol to any number of connections.
// It is safe for concurrent use.
type Agent struct {
	opts    Options
	store   *store.Store // the sessions of SessionsDir and their index
	started time.Time
	ctx     context.Context // ends at Close
	cancel  context.CancelFunc
	// log is opts.Log written from a goroutine of its own: what the
	// sessions log while the engine stamps their events (a notice, an
	// update that failed) never waits for a stderr nobody reads.
	log *boundlog.Async

	mu       sync.Mutex
	sessions map[string]*acpSession // open sessions by id
	gates    gates                  // serialize opening and closing one id (lifecycle.go)
	closed   bool
	wg       sync.WaitGroup // closers
}

// New returns an Agent for opts.
func New(opts Options) (*Agent, error) {
	if opts.Host == nil {
		return nil, errors.New("acpserver: no host")
	}
	if opts.SessionsDir == "" {
		return nil, errors.New("acpserver: no sessions directory")
	}
	switch opts.Permission {
	case "":
		opts.Permission = PermissionAsk
	case PermissionAsk, PermissionAllow, PermissionDeny:
	default:
		return nil, fmt.Errorf("acpserver: permission %q: want ask, allow or deny", opts.Permission)
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Version == "" {
		opts.Version = buildinfo.Version()
	}
	// Opening the store moves the sessions of older layouts in, so
	// session/list shows them with the daemon's own.
	st, err := store.Open(context.Background(), opts.SessionsDir, opts.Log)
	if err != nil {
		return nil, fmt.Errorf("acpserver: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{opts: opts, store: st, started: time.Now(), ctx: ctx, cancel: cancel, log: boundlog.NewAsync(opts.Log, 0), sessions: map[string]*acpSession{}}, nil
}

// Handler returns the handler of a new connection (a jsonrpc.NewHandler).
func (a *Agent) Handler(c *jsonrpc.Conn) jsonrpc.Handler {
	return &conn{agent: a, c: c, open: map[string]*acpSession{}}
}

// Close ends every session: running turns are cancelled and end into
// their files, the files are closed, and the forwarders stop. It waits
// until all of that is done or ctx ends.
func (a *Agent) Close(ctx context.Context) error {
	a.mu.Lock()
	a.closed = true
	list := make([]*acpSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		list = append(list, s)
	}
	a.mu.Unlock()
	// Sessions close side by side: each may wait up to its extensions'
	// stop timeout, which one after another would add up.
	first := engine.CloseAll(list, (*acpSession).close)
	a.cancel()
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	_ = a.log.Close() // what was logged is written
	return first
}

// track counts one more goroutine among those Close waits for, unless
// Close has begun: then it reports false and the caller must not start
// one that Close would wait for. Adding under a.mu, where Close sets
// closed before it waits, keeps every Add ahead of the Wait.
func (a *Agent) track() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.wg.Add(1)
	return true
}

func (a *Agent) logf(format string, args ...any) {
	fmt.Fprintf(a.log, "zot daemon: "+format+"\n", args...)
}

// validSessionID reports whether id has the form of a session id (see
// store.ValidID): an id of another form names no session, and never a
// path outside SessionsDir.
func validSessionID(id string) bool { return store.ValidID(id) }

// newSessionID returns a fresh id (store.NewID).
func newSessionID() string { return store.NewID() }

// path returns the file of session id.
func (a *Agent) path(id string) string { return a.store.Path(id) }

// stored reports whether session id has a file.
func (a *Agent) stored(id string) bool { return a.store.Has(id) }

// lookup returns the open session id, or nil.
func (a *Agent) lookup(id string) *acpSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}
