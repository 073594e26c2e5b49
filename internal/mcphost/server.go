package mcphost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/boundlog"
	"zot.dev/zot/internal/mcpclient"
	"zot.dev/zot/internal/subproc"
	"zot.dev/zot/internal/tools"
)

// server is one MCP server of a Manager, across its restarts.
type server struct {
	m    *Manager
	spec Server
	// ctx ends when the server is stopped: a start under way gives up.
	ctx    context.Context
	cancel context.CancelFunc

	// calls counts the running tool calls; a retired server is stopped
	// once it is zero.
	calls sync.WaitGroup

	mu       sync.Mutex
	status   string
	err      string
	attempt  int           // numbers the starts; a start that is not the latest is thrown away
	ready    chan struct{} // closed when the latest start ended (ready or failed); nil before the first
	deadline time.Time     // how long a prompt waits for the latest start
	lateSaid bool          // the latest start was reported late
	restarts int
	gaveUp   bool // the restart budget is spent and the user was told
	stopped  bool
	changed  bool // the server said its tools changed since they were fetched
	conn     *conn
	remote   []*mcpclient.Tool // the tools as last fetched, in the server's order
	names    []string          // the names the model sees, by remote's index
	impl     *mcpclient.Implementation
}

// conn is one live connection to a server.
type conn struct {
	cs     *mcpclient.Session
	proc   *subproc.Process // nil but for stdio
	stderr *tail            // the end of a stdio server's stderr
	// gone is closed once the end of the connection has been taken in
	// (the server marked crashed, or stopped).
	gone chan struct{}
	// logf is the stdio server's log file, nil without Config.LogDir.
	logf *boundlog.File
	// lines is a stdio server's transport: it knows whether the
	// server's output broke the protocol.
	lines *lineTransport
}

func newServer(m *Manager, spec Server) *server {
	ctx, cancel := context.WithCancel(context.Background())
	return &server{m: m, spec: spec, status: StatusStarting, ctx: ctx, cancel: cancel}
}

// source is the server's tool source in the tool set.
func (s *server) source() string { return "mcp:" + s.spec.Name }

// timeout is the bound of one call.
func (s *server) timeout() time.Duration {
	if s.spec.Timeout > 0 {
		return s.spec.Timeout
	}
	return s.m.cfg.CallTimeout
}

// begin starts a connection attempt in the background. The caller holds
// m.mu and has checked that the Manager is not closed.
func (s *server) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.attempt++
	s.status = StatusStarting
	s.err = ""
	s.ready = make(chan struct{})
	s.deadline = time.Now().Add(s.m.cfg.StartTimeout)
	s.lateSaid = false
	gen, ready := s.attempt, s.ready
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		s.connect(gen, ready)
	}()
}

// startState returns the channel closed when the latest start ends and
// how long a prompt waits for it; nil before the first start.
func (s *server) startState() (<-chan struct{}, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil || s.stopped {
		return nil, time.Time{}
	}
	return s.ready, s.deadline
}

// late tells the user, once per start, that a prompt went on without the
// server.
func (s *server) late() {
	s.mu.Lock()
	if s.lateSaid || s.stopped || s.status != StatusStarting {
		s.mu.Unlock()
		return
	}
	s.lateSaid = true
	s.mu.Unlock()
	s.m.notify(Notice{Server: s.spec.Name, Level: "warn", Message: fmt.Sprintf(
		"MCP server %q is not ready after %s; going on without its tools (they join when it is ready)", s.spec.Name, s.m.cfg.StartTimeout)})
}

// connect runs one start: spawn or connect, initialize, list the tools.
func (s *server) connect(gen int, ready chan struct{}) {
	ctx, cancel := context.WithTimeout(s.ctx, s.m.cfg.ConnectTimeout)
	defer cancel()
	c, list, err := s.dial(ctx)
	s.mu.Lock()
	if s.stopped || gen != s.attempt {
		s.mu.Unlock()
		close(ready)
		if c != nil {
			c.close(s.m.cfg)
		}
		return
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && s.ctx.Err() == nil {
			err = fmt.Errorf("no answer to initialize within %s: %w", s.m.cfg.ConnectTimeout, err)
		}
		s.mu.Unlock()
		// The notice goes before the status changes, so whoever sees the
		// failure (a prompt waiting for the server) has it already.
		s.m.notify(Notice{Server: s.spec.Name, Level: "error", Message: fmt.Sprintf("MCP server %q failed to start: %v", s.spec.Name, err)})
		s.mu.Lock()
		if gen == s.attempt && !s.stopped {
			s.status, s.err = StatusFailed, err.Error()
		}
		s.mu.Unlock()
		close(ready)
		return
	}
	s.conn, s.remote, s.status = c, list, StatusReady
	s.impl = c.cs.InitializeResult().ServerInfo
	s.changed = false
	s.mu.Unlock()
	s.m.publish()
	close(ready)
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		s.watch(gen, c)
	}()
}

// watch waits for the connection to end; one that ends while the server
// should run is a crash.
func (s *server) watch(gen int, c *conn) {
	defer close(c.gone)
	werr := c.cs.Wait()
	why := c.why(werr)
	s.mu.Lock()
	if s.stopped || gen != s.attempt || s.conn != c {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	s.status = StatusCrashed
	s.err = why
	left := s.m.cfg.MaxRestarts - s.restarts
	s.mu.Unlock()
	c.close(s.m.cfg) // reap what is left of it
	msg := fmt.Sprintf("MCP server %q stopped: %s", s.spec.Name, why)
	if left > 0 {
		msg += "; it is restarted at the next prompt"
	}
	s.m.notify(Notice{Server: s.spec.Name, Level: "error", Message: msg})
}

// maybeRestart restarts a crashed server, within the restart budget.
func (s *server) maybeRestart() {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.m.closed {
		return
	}
	s.mu.Lock()
	if s.stopped || s.status != StatusCrashed {
		s.mu.Unlock()
		return
	}
	if s.restarts >= s.m.cfg.MaxRestarts {
		tell := !s.gaveUp
		s.gaveUp = true
		s.mu.Unlock()
		if tell {
			s.m.notify(Notice{Server: s.spec.Name, Level: "error", Message: fmt.Sprintf(
				"MCP server %q crashed again; it was restarted %d times and is not restarted any more in this session", s.spec.Name, s.restarts)})
		}
		return
	}
	s.restarts++
	n := s.restarts
	s.mu.Unlock()
	s.m.notify(Notice{Server: s.spec.Name, Level: "info", Message: fmt.Sprintf("restarting MCP server %q (restart %d of %d)", s.spec.Name, n, s.m.cfg.MaxRestarts)})
	s.begin()
}

// markChanged notes that the server said its tools changed.
func (s *server) markChanged() {
	s.mu.Lock()
	s.changed = true
	s.mu.Unlock()
}

// refreshIfChanged fetches the tools again when the server said they
// changed.
func (s *server) refreshIfChanged(ctx context.Context) {
	s.mu.Lock()
	c := s.conn
	if !s.changed || c == nil || s.stopped {
		s.mu.Unlock()
		return
	}
	s.changed = false
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, DefaultRefreshTimeout)
	defer cancel()
	list, err := listTools(ctx, c.cs)
	if err != nil {
		fmt.Fprintf(s.m.cfg.Log, "zot: mcp %s: fetching the changed tools: %v\n", s.spec.Name, err)
		return
	}
	s.mu.Lock()
	if s.conn != c || s.stopped {
		s.mu.Unlock()
		return
	}
	s.remote = list
	s.mu.Unlock()
	s.m.publish()
}

// markStopped says the server is going away: no call starts any more.
func (s *server) markStopped() {
	s.mu.Lock()
	s.stopped = true
	s.status = StatusStopped
	s.mu.Unlock()
	s.cancel()
}

// shutdown closes the live connection, if any (a stdio server by the
// ladder), and waits until it is gone.
func (s *server) shutdown() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.close(s.m.cfg)
	}
}

// info describes the server.
func (s *server) info() ServerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := ServerInfo{
		Name:      s.spec.Name,
		Transport: s.spec.Kind(),
		Status:    s.status,
		Error:     s.err,
		Tools:     slices.Clone(s.names),
		Restarts:  s.restarts,
	}
	if s.impl != nil {
		in.ServerName, in.ServerVersion = s.impl.Name, s.impl.Version
	}
	return in
}

// named names the server's tools (taken holds the names given before and
// is updated) and returns them as the model sees them.
func (s *server) named(taken map[string]bool) []tools.Tool {
	s.mu.Lock()
	remote := s.remote
	prev := s.names
	s.mu.Unlock()
	want := make([]string, len(remote))
	for i, t := range remote {
		want[i] = ToolName(s.spec.Name, t.Name)
	}
	got := assignNames(want, taken, func(w, g string) {
		if !slices.Contains(prev, g) {
			fmt.Fprintf(s.m.cfg.Log, "zot: mcp %s: tool name %s is taken; offering it as %s\n", s.spec.Name, w, g)
		}
	})
	list := make([]tools.Tool, len(remote))
	for i, t := range remote {
		list[i] = newTool(s, got[i], t)
	}
	s.mu.Lock()
	s.names = got
	s.mu.Unlock()
	return list
}

// acquire returns the live connection for a call, counted in s.calls
// (the caller calls s.calls.Done), or why there is none.
func (s *server) acquire() (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return nil, fmt.Errorf("MCP server %q was removed", s.spec.Name)
	case s.conn != nil:
		s.calls.Add(1)
		return s.conn, nil
	case s.status == StatusCrashed && s.restarts < s.m.cfg.MaxRestarts:
		return nil, fmt.Errorf("MCP server %q is not running (%s); it is restarted at the next prompt", s.spec.Name, s.err)
	case s.status == StatusCrashed:
		return nil, fmt.Errorf("MCP server %q is not running (%s) and is not restarted any more in this session", s.spec.Name, s.err)
	case s.status == StatusStarting:
		return nil, fmt.Errorf("MCP server %q is still starting", s.spec.Name)
	}
	return nil, fmt.Errorf("MCP server %q is not running: %s", s.spec.Name, s.err)
}

// dial connects to the server, initializes the session and lists the
// tools. On failure everything it started is stopped.
func (s *server) dial(ctx context.Context) (*conn, []*mcpclient.Tool, error) {
	opts := mcpclient.Options{
		Client:         mcpclient.Implementation{Name: s.m.cfg.ClientName, Version: s.m.cfg.ClientVersion},
		OnToolsChanged: s.markChanged,
		OnProgress: func(p mcpclient.ProgressParams) {
			s.m.progress.deliver(p.ProgressToken, progressText(p))
		},
	}
	c := &conn{gone: make(chan struct{})}
	// A stdio server whose output breaks the protocol fails its start at
	// once, with the line that broke it.
	ctx, broke := context.WithCancelCause(ctx)
	defer broke(nil)
	var transport mcpclient.Conn
	switch s.spec.Kind() {
	case TransportStdio:
		dir := s.spec.CWD
		if dir == "" {
			dir = s.m.sess.CWD()
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(s.m.sess.CWD(), dir)
		}
		// A missing directory would fail the spawn with an error that
		// names the command ("fork/exec <command>: no such file").
		if st, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("its working directory: %w", err)
		} else if !st.IsDir() {
			return nil, nil, fmt.Errorf("its working directory %s is not a directory", dir)
		}
		env := os.Environ()
		for k, v := range s.spec.Env {
			env = append(env, k+"="+v)
		}
		c.stderr = &tail{max: 2048}
		var stderr io.Writer = c.stderr
		var log io.Writer // notes about its stdout
		if f := s.openLog(); f != nil {
			c.logf, log = f, f
			stderr = io.MultiWriter(c.stderr, f)
		}
		// Read at a bounded rate: a server that floods its stderr waits
		// instead of taking a core, and its log stays within its cap.
		stderr = boundlog.Paced(stderr, boundlog.StderrRate)
		p, err := subproc.Start(ctx, subproc.Command{
			Path:       s.spec.Command,
			Args:       s.spec.Args,
			Dir:        dir,
			Env:        env,
			StdinPipe:  true,
			StdoutPipe: true,
			Stderr:     stderr,
			StdinGrace: s.m.cfg.StdinGrace,
			TermGrace:  s.m.cfg.TermGrace,
		})
		if err != nil {
			c.close(s.m.cfg)
			return nil, nil, err
		}
		c.proc = p
		c.lines = newLineTransport(p.Stdout(), p.Stdin(), log, broke)
		lc, _ := c.lines.Connect(ctx)
		transport = lc
	case TransportHTTP:
		transport = mcpclient.DialStreamableHTTP(s.spec.URL, httpClient(s.spec.Headers))
	case TransportSSE:
		// The event stream lives as long as the connection; ctx bounds
		// only the wait for its endpoint.
		t, err := mcpclient.DialSSE(ctx, s.spec.URL, httpClient(s.spec.Headers))
		if err != nil {
			return nil, nil, err
		}
		transport = t
	}
	cs, err := mcpclient.Connect(ctx, transport, opts)
	if err != nil {
		c.close(s.m.cfg)
		return nil, nil, c.explain(context.Cause(ctx), err)
	}
	c.cs = cs
	list, err := listTools(ctx, cs)
	if err != nil {
		c.close(s.m.cfg)
		return nil, nil, c.explain(context.Cause(ctx), fmt.Errorf("listing tools: %w", err))
	}
	return c, list, nil
}

// listTools fetches every page of the server's tools.
func listTools(ctx context.Context, cs *mcpclient.Session) ([]*mcpclient.Tool, error) {
	if cs.InitializeResult().Capabilities.Tools == nil {
		return nil, nil // a server without tools
	}
	return cs.ListTools(ctx)
}

// close ends the connection: the session is closed (for stdio that
// closes the server's stdin) and a stdio server's process group is
// stopped by the ladder.
func (c *conn) close(cfg Config) {
	if c.cs != nil {
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.cs.Close()
		}()
		if c.proc == nil {
			<-done
			return
		}
		// The session's close waits for the server's output to end; the
		// ladder below makes sure it does.
		defer func() { <-done }()
	}
	if c.proc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.StdinGrace+cfg.TermGrace+time.Second)
		defer cancel()
		c.proc.Stop(ctx)
	}
	if c.lines != nil {
		c.lines.lines.Close() // tells the lines it dropped
	}
	if c.logf != nil {
		c.logf.Close() // the process is reaped: nothing writes to it any more
	}
}

// openLog opens the server's log file for appending, kept within
// boundlog.FileCap (and one backup), or returns nil without Config.LogDir
// or when it cannot be opened (logged).
func (s *server) openLog() *boundlog.File {
	dir := s.m.cfg.LogDir
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(s.m.cfg.Log, "zot: mcp %s: its log: %v\n", s.spec.Name, err)
		return nil
	}
	f, err := boundlog.OpenFile(filepath.Join(dir, logName(s.spec.Name)), boundlog.FileCap)
	if err != nil {
		fmt.Fprintf(s.m.cfg.Log, "zot: mcp %s: its log: %v\n", s.spec.Name, err)
		return nil
	}
	fmt.Fprintf(f, "--- %s starting %s %s\n", time.Now().UTC().Format(time.RFC3339), s.spec.Command, strings.Join(s.spec.Args, " "))
	return f
}

// logName is the name of a stdio server's log file: mcp-<name>.log, the
// name sanitised as in tool names and cut to 100 characters, since a
// file name longer than 255 bytes cannot be opened.
func logName(name string) string {
	n := sanitize(name)
	if len(n) > 100 {
		n = n[:100]
	}
	return "mcp-" + n + ".log"
}

// why says how the connection ended.
func (c *conn) why(werr error) string {
	var parts []string
	if c.lines != nil {
		if b := c.lines.brokenErr(); b != nil {
			// zot closed it: how the process ended after that says
			// nothing.
			return "zot closed the connection: " + b.Error()
		}
	}
	if c.proc != nil {
		select {
		case <-c.proc.Done():
			if ps := c.proc.ProcessState(); ps != nil {
				parts = append(parts, "the process ended ("+ps.String()+")")
			}
		case <-time.After(500 * time.Millisecond):
			parts = append(parts, "the connection closed")
		}
	} else {
		parts = append(parts, "the connection closed")
	}
	if werr != nil && !errors.Is(werr, mcpclient.ErrConnectionClosed) {
		parts = append(parts, werr.Error())
	}
	if c.stderr != nil {
		if t := c.stderr.last(); t != "" {
			parts = append(parts, "stderr: "+t)
		}
	}
	return strings.Join(parts, "; ")
}

// explain adds why the start was given up (cause: the server's output
// broke the protocol) and the end of a stdio server's stderr to a start's
// error.
func (c *conn) explain(cause, err error) error {
	if c.lines != nil {
		if b := c.lines.brokenErr(); b != nil {
			return b
		}
	}
	if cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return cause
	}
	if c.stderr != nil {
		if t := c.stderr.last(); t != "" {
			return fmt.Errorf("%w (stderr: %s)", err, t)
		}
	}
	return err
}

// progressText is what a progress notification shows as tool_progress.
func progressText(p mcpclient.ProgressParams) string {
	var b strings.Builder
	b.WriteString(p.Message)
	if p.Total > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "(%g/%g)", p.Progress, p.Total)
	} else if b.Len() == 0 {
		fmt.Fprintf(&b, "(%g)", p.Progress)
	}
	b.WriteByte('\n')
	return b.String()
}

// httpClient returns a client that adds headers to every request. It has
// no overall timeout: a streamable HTTP session keeps a stream open.
func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
}

// headerTransport adds fixed headers to each request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// last returns the last non-empty line written, trimmed.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "?")), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
