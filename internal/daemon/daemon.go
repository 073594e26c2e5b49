// Package daemon runs zot's daemon door: JSON-RPC 2.0 (package jsonrpc)
// over a Unix domain socket, one connection per client, every client of
// the daemon's own user and no other.
//
// The endpoint is $ZOT_SOCKET when set, else <ZOT_HOME>/daemon.sock;
// when that path is longer than a socket address can hold, a short
// per-user path under $XDG_RUNTIME_DIR (else the temp dir) is used
// instead ([ResolveSocket]). The socket is made 0600 in a directory
// that is 0700 (or a sticky shared directory such as /tmp when
// ZOT_SOCKET names one). A lock file beside the socket (<socket>.lock,
// flock) makes one daemon the owner of an endpoint: a second one fails
// with a message naming the first one's pid, and a socket file left by a
// daemon that died is removed only once its lock is free. Each client's
// uid is read with SO_PEERCRED (Linux); a client of another uid is
// refused and logged with its pid.
//
// With Ephemeral, the daemon exits Grace (1 s) after its last client
// left, once Busy says no work runs (a turn whose client left runs to its
// end first); a client that connects within that time cancels the exit,
// and a daemon no client has reached yet never exits for it.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// DefaultGrace is how long an ephemeral daemon waits after its last
// client left.
const DefaultGrace = time.Second

// StopStall is how long, once the daemon stops, a client may read
// nothing before it is let go (instead of the connection's stall
// timeout): the answers of the work under way wait for no one longer.
const StopStall = 2 * time.Second

// Options configures Run.
type Options struct {
	// Socket is the endpoint's path; "" resolves it with ResolveSocket.
	Socket string
	// Ephemeral makes the daemon exit Grace after the last client left.
	Ephemeral bool
	// Grace is the ephemeral daemon's wait; 0 means DefaultGrace.
	Grace time.Duration
	// Busy, when set, reports whether work runs that outlives its client
	// (a turn whose client left): an ephemeral daemon whose grace ran out
	// while it does waits another grace, and so on, before it stops.
	Busy func() bool
	// NewHandler makes each connection's handler.
	NewHandler jsonrpc.NewHandler
	// RPC configures each connection.
	RPC jsonrpc.Options
	// MaxLineBytes bounds the lines clients send (package jsonrpc's
	// NDJSON transport); 0 means jsonrpc.DefaultMaxLineBytes.
	MaxLineBytes int
	// Listeners are further endpoints served beside the socket (the
	// WebSocket listeners of --listen), their clients served as the
	// socket's are. Run closes them when it stops.
	Listeners []jsonrpc.Listener
	// Log receives the daemon's log lines; nil discards them.
	Log io.Writer
	// Ready, when set, is called once the socket accepts clients, with
	// its path.
	Ready func(socket string)
	// Stopping, when set, is called when the daemon stops (ctx ended, or
	// the ephemeral grace ran out), before the connections are closed, so
	// the work under way can end and answer while the clients listen. Its
	// context ends after StopTimeout.
	Stopping func(ctx context.Context)
	// StopTimeout bounds Stopping; 0 means 10 s.
	StopTimeout time.Duration
}

// Run serves the endpoint until ctx ends or, with Ephemeral, the last
// client has been gone for the grace time. It returns nil then, once
// every connection has ended and the socket is removed; an error when
// the endpoint cannot be taken (another daemon holds it, the path is
// unusable) or accepting fails.
func Run(ctx context.Context, opts Options) error {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 10 * time.Second
	}
	if opts.NewHandler == nil {
		return fmt.Errorf("zot daemon: no handler")
	}
	path := opts.Socket
	if path == "" {
		p, err := ResolveSocket(nil)
		if err != nil {
			return err
		}
		path = p.Path
		if p.Fallback {
			fmt.Fprintf(opts.Log, "zot daemon: %s is too long for a socket address; using %s\n", p.Wanted, p.Path)
		}
	}
	ep, err := Listen(path, opts.Log)
	if err != nil {
		for _, l := range opts.Listeners {
			_ = l.Close()
		}
		return err
	}
	defer ep.Close()
	fmt.Fprintf(opts.Log, "zot daemon: listening on %s\n", ep.Addr())
	if opts.Ready != nil {
		opts.Ready(ep.Addr())
	}

	idle := make(chan struct{})
	track := &tracker{grace: opts.Grace, busy: opts.Busy, fire: func() { close(idle) }}
	var (
		connsMu  sync.Mutex
		conns    = map[*jsonrpc.Conn]struct{}{}
		stopping bool
	)
	// hurryAll bounds, from the moment the daemon stops, how long each
	// client may read nothing: the turns' last answers wait on it.
	hurryAll := func() {
		connsMu.Lock()
		defer connsMu.Unlock()
		stopping = true
		for c := range conns {
			c.Hurry(StopStall)
		}
	}
	var hooks jsonrpc.ServeHooks
	hooks.Opened = func(c *jsonrpc.Conn) {
		connsMu.Lock()
		conns[c] = struct{}{}
		if stopping {
			c.Hurry(StopStall)
		}
		connsMu.Unlock()
		fmt.Fprintf(opts.Log, "zot daemon: client %s connected\n", c.Peer().Label)
		if opts.Ephemeral {
			track.opened()
		}
	}
	hooks.Closed = func(c *jsonrpc.Conn) {
		connsMu.Lock()
		delete(conns, c)
		connsMu.Unlock()
		if err := c.Err(); err != nil {
			fmt.Fprintf(opts.Log, "zot daemon: client %s left: %v\n", c.Peer().Label, err)
		} else {
			fmt.Fprintf(opts.Log, "zot daemon: client %s left\n", c.Peer().Label)
		}
		if opts.Ephemeral {
			track.closed()
		}
	}

	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	served := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); errors.Is(cause, context.Canceled) {
				fmt.Fprintln(opts.Log, "zot daemon: stopping")
			} else {
				fmt.Fprintf(opts.Log, "zot daemon: stopping (%v)\n", cause)
			}
		case <-idle:
			fmt.Fprintf(opts.Log, "zot daemon: no client for %v; stopping\n", opts.Grace)
		case <-served:
			return
		}
		hurryAll()
		if opts.Stopping != nil {
			sctx, cancel := context.WithTimeout(context.Background(), opts.StopTimeout)
			opts.Stopping(sctx)
			cancel()
		}
		stopServe()
	}()
	// Every endpoint is served alike; the first to fail stops them all.
	var (
		errMu   sync.Mutex
		serving sync.WaitGroup
	)
	serveOne := func(l jsonrpc.Listener) {
		defer serving.Done()
		if e := jsonrpc.Serve(serveCtx, l, opts.NewHandler, opts.RPC, hooks); e != nil {
			errMu.Lock()
			if err == nil {
				err = e
			}
			errMu.Unlock()
			stopServe()
		}
	}
	err = nil
	serving.Add(1 + len(opts.Listeners))
	for _, l := range opts.Listeners {
		fmt.Fprintf(opts.Log, "zot daemon: listening on %s\n", l.Addr())
		go serveOne(l)
	}
	serveOne(jsonrpc.NDJSONListener(ep, opts.MaxLineBytes))
	serving.Wait()
	close(served)
	wg.Wait()
	track.stop()
	if err != nil {
		return fmt.Errorf("zot daemon: %w", err)
	}
	return nil
}

// tracker counts an ephemeral daemon's clients and calls fire, once,
// when the last one has been gone for grace and busy (when set) says no
// work runs.
type tracker struct {
	grace time.Duration
	busy  func() bool
	fire  func()

	mu      sync.Mutex
	clients int
	gen     int // bumped by every change, so a stale timer does nothing
	timer   *time.Timer
	fired   bool
}

func (t *tracker) opened() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clients++
	t.gen++
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

func (t *tracker) closed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clients--
	t.gen++
	if t.clients > 0 || t.fired {
		return
	}
	t.arm(t.gen)
}

// arm starts the timer of generation gen; t.mu is held.
func (t *tracker) arm(gen int) {
	t.timer = time.AfterFunc(t.grace, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.gen != gen || t.clients > 0 || t.fired {
			return
		}
		if t.busy != nil && t.busy() {
			t.arm(gen) // look again a grace later
			return
		}
		t.fired = true
		t.fire()
	})
}

// stop cancels a pending timer.
func (t *tracker) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fired = true
	if t.timer != nil {
		t.timer.Stop()
	}
}
