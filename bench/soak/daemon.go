//go:build linux

package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The daemon phase runs one `zot daemon` for the whole run, beside the
// rpc lanes, with children that misbehave and clients that come and go:
//
//   - extensions (every session starts them): one printing garbage on
//     stdout and stderr without end, one sending notices without end, one
//     that crashes a moment after it is ready;
//   - MCP servers (ACP mcpServers of every session/new): one printing
//     lines that are not JSON-RPC without end, one that crashes on every
//     tool call (restarted at the next prompt, three times a session);
//   - clients: prompts read at once or by a slow reader (8 KB/s), clients
//     that leave mid-turn or mid-replay of a session/load, session/cancel,
//     and bursts of reconnects.
//
// The daemon is sampled throughout (memory, descriptors, goroutines by
// _zot/status, the disk its logs take, its stderr) and, once the clients
// have stopped and its sessions have closed, held to the figures it had
// when idle after its warm-up.

// Bounds of the daemon phase.
const (
	daemonClients  = 6
	daemonTimeout  = 90 * time.Second // for an answer to a client that reads
	slowReaderRate = 8 << 10          // bytes a second a slow client reads
	// daemonFDSlack and daemonGoroutineSlack are how many more
	// descriptors and goroutines the idle daemon may have at the end
	// than when idle after its warm-up.
	daemonFDSlack        = 3
	daemonGoroutineSlack = 10
	// settleFor bounds the wait for the idle daemon to come back to its
	// figures: past the stall timeout (10 s) after which a connection
	// whose client stopped reading is let go.
	settleFor = 20 * time.Second
	// maxDaemonLogs bounds the disk its logs take: five children's logs,
	// each with its backup, under boundlog's 8 MiB cap, and a little.
	maxDaemonLogs = 5*2*8<<20 + 1<<20
	// stderrPerSession and stderrPerConnection bound the daemon's
	// stderr: the lines about one session's children are bounded per
	// window (boundlog), and a connection is logged when it comes and
	// goes; nothing is logged per frame.
	stderrPerSession    = 8 << 10
	stderrPerConnection = 1 << 10
	// daemonGrowth and daemonGrowthBytes bound the growth of its idle
	// memory between its warm-up and the end, on runs of at least
	// daemonGrowthFrom: past both is a failure. The runtime keeps some of
	// what the load took (about 4 MiB after one minute and after ten
	// alike); a leak grows with the run.
	daemonGrowth      = 0.25
	daemonGrowthBytes = 8 << 20
	daemonGrowthFrom  = 5 * time.Minute
)

// DaemonStats counts what the daemon phase did.
type DaemonStats struct {
	Connections, Prompts, Answered, SlowPrompts, LeftMidTurn, Loads, LeftMidReplay, Cancels, Reconnects int
	// Notices counts the _zot/notify notifications clients read.
	Notices int
	// MaxChildren is the most processes of the daemon's (extensions, MCP
	// servers, tools) seen at once.
	MaxChildren int
}

// DaemonSample is one reading of the daemon.
type DaemonSample struct {
	At              time.Duration
	RSS             int64
	FDs, Goroutines int
	Logs, Stderr    int64
	Sessions        int
	Children        int
	// Idle: taken with no session and no child left; AtStart: the one
	// after the warm-up.
	Idle, AtStart bool
}

// DaemonResult is what the daemon phase found.
type DaemonResult struct {
	Stats   DaemonStats
	Samples []DaemonSample
	// Start and End are the idle daemon after its warm-up and at the end.
	Start, End DaemonSample
	MaxLogs    int64
}

// daemonPhase is the daemon phase in progress.
type daemonPhase struct {
	run                   *run
	dir, home, sock, work string
	mark                  string
	script                string
	cmd                   *exec.Cmd
	stderr                *countingTail
	exited                chan struct{}

	mu       sync.Mutex
	stats    DaemonStats
	res      DaemonResult
	sessions []string // ids of sessions made, for session/load
}

// countingTail counts what is written to it and keeps its end.
type countingTail struct {
	mu   sync.Mutex
	n    int64
	tail []byte
}

func (c *countingTail) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += int64(len(p))
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - stderrKeep; over > 0 {
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return len(p), nil
}

func (c *countingTail) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *countingTail) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.tail)
}

// runDaemon runs the daemon phase until the run's end.
func (r *run) runDaemon(ctx context.Context, rnd *rand.Rand) *DaemonResult {
	d := &daemonPhase{run: r, dir: filepath.Join(r.cfg.Dir, "daemon"), mark: r.id + ".daemon", exited: make(chan struct{})}
	d.home = filepath.Join(d.dir, "home")
	d.sock = filepath.Join(d.dir, "s")
	d.work = filepath.Join(d.dir, "work")
	if err := d.setUp(rnd); err != nil {
		r.failf("daemon", "setting up: %v", err)
		return &d.res
	}
	defer d.stop()
	if !d.waitListening(ctx) {
		return &d.res
	}
	// Warm-up: one client's full cycle, then the idle figures.
	c := d.client(rand.New(rand.NewPCG(rnd.Uint64(), 0)))
	c.prompt(ctx, false)
	start, ok := d.idle(ctx, nil)
	if !ok {
		return &d.res
	}
	start.AtStart = true
	d.res.Start = start
	var wg sync.WaitGroup
	clients := daemonClients
	if r.cfg.Duration < time.Minute {
		clients = daemonClients / 2 // make test's short run
	}
	for range clients {
		c := d.client(rand.New(rand.NewPCG(rnd.Uint64(), 1)))
		wg.Go(func() { c.loop(ctx) })
	}
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for time.Now().Before(r.end) && ctx.Err() == nil {
			select {
			case <-t.C:
				d.sample(false)
			case <-ctx.Done():
			case <-d.exited:
				return
			}
		}
	}()
	wg.Wait()
	<-sampled
	end, ok := d.idle(ctx, &start)
	if ok {
		d.res.End = end
		d.check()
	}
	d.mu.Lock()
	d.res.Stats = d.stats
	d.mu.Unlock()
	return &d.res
}

// setUp writes the children and the script and starts the daemon.
func (d *daemonPhase) setUp(rnd *rand.Rand) error {
	for _, dir := range []string{d.home, d.work} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(d.work, "notes.txt"), []byte("notes of the soak\n"), 0o644); err != nil {
		return err
	}
	exts := map[string]string{
		"garbage": "yes 'stderr spam' >&2 &\nexec yes 'not json'",
		"notices": `exec yes '{"type":"notify","level":"info","message":"again"}'`,
		"crasher": "sleep 0.$(( $$ % 9 + 1 ))\nexit 3",
	}
	var args []string
	for name, body := range exts {
		dir := filepath.Join(d.dir, "ext", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		script := filepath.Join(dir, "ext.sh")
		sh := fmt.Sprintf("printf '%%s\\n' '{\"type\":\"hello\",\"name\":\"%s\",\"version\":\"1\"}' '{\"type\":\"ready\"}'\n%s\n", name, body)
		if err := os.WriteFile(script, []byte(sh), 0o755); err != nil {
			return err
		}
		m, _ := json.Marshal(map[string]any{"name": name, "exec": "/bin/sh", "args": []string{script}})
		if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
			return err
		}
		args = append(args, "--ext", dir)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "mcp.py"), []byte(mcpServerPy), 0o755); err != nil {
		return err
	}
	d.script = filepath.Join(d.dir, "script.json")
	if err := os.WriteFile(d.script, daemonScript(rnd), 0o644); err != nil {
		return err
	}
	d.stderr = &countingTail{}
	d.cmd = exec.Command(d.run.cfg.Zot, append([]string{"daemon", "--provider", "scripted", "--script", d.script, "--permission", "allow"}, args...)...)
	d.cmd.Env = append(cleanEnv(), markVar+"="+d.mark, "ZOT_VALIDATE=1", "ZOT_HOME="+d.home, "ZOT_SOCKET="+d.sock)
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		return err
	}
	go func() {
		_ = d.cmd.Wait()
		close(d.exited)
	}()
	return nil
}

// stop ends the daemon with SIGTERM and checks that none of its
// processes is left.
func (d *daemonPhase) stop() {
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		if st := d.cmd.ProcessState; st != nil && st.ExitCode() != 0 {
			d.run.failf("daemon", "SIGTERM: exit status %v; stderr:\n%s", st, d.stderr)
		}
	case <-time.After(exitTimeout):
		d.run.failf("daemon", "did not exit within %v of SIGTERM", exitTimeout)
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
	deadline := time.Now().Add(leakGrace)
	for {
		left := marked(d.mark, false, -1)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			d.run.failf("daemon", "processes left after it exited: %s", describe(left))
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *daemonPhase) waitListening(ctx context.Context) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.stderr.String(), "listening on") {
		select {
		case <-d.exited:
			d.run.failf("daemon", "exited before listening: %s", d.stderr)
			return false
		case <-ctx.Done():
			return false
		default:
		}
		if time.Now().After(deadline) {
			d.run.failf("daemon", "not listening after 30s: %s", d.stderr)
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// status asks the daemon for _zot/status on a connection of its own.
func (d *daemonPhase) status() (sessions, goroutines int, err error) {
	c, err := net.DialTimeout("unix", d.sock, 5*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"_zot/status","params":{}}`+"\n"); err != nil {
		return 0, 0, err
	}
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 0, 0, err
		}
		var f struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				Sessions   []json.RawMessage `json:"sessions"`
				Goroutines *int              `json:"goroutines"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &f) != nil || string(f.ID) != "2" {
			continue
		}
		if f.Result.Goroutines == nil {
			return 0, 0, errors.New("_zot/status gives no goroutines")
		}
		return len(f.Result.Sessions), *f.Result.Goroutines, nil
	}
}

// sample reads the daemon's figures.
func (d *daemonPhase) sample(idle bool) (DaemonSample, bool) {
	pid := d.cmd.Process.Pid
	s := DaemonSample{At: time.Since(d.run.begin), Idle: idle, Stderr: d.stderr.size(), Logs: dirBytes(filepath.Join(d.home, "logs"))}
	var err error
	if s.RSS, err = rss(pid); err != nil {
		return s, false
	}
	if s.FDs, err = fdCount(pid); err != nil {
		return s, false
	}
	s.Children = len(marked(d.mark, false, pid))
	sessions, goroutines, err := d.status()
	if err != nil {
		d.run.failf("daemon", "_zot/status: %v", err)
		return s, false
	}
	s.Sessions, s.Goroutines = sessions, goroutines
	// The status connection itself is open while it answers; the
	// descriptors were counted before it.
	d.mu.Lock()
	d.res.Samples = append(d.res.Samples, s)
	d.res.MaxLogs = max(d.res.MaxLogs, s.Logs)
	d.stats.MaxChildren = max(d.stats.MaxChildren, s.Children)
	d.mu.Unlock()
	if s.Logs > maxDaemonLogs {
		d.run.failf("daemon", "its logs take %d bytes, over %d", s.Logs, maxDaemonLogs)
	}
	return s, true
}

// idle waits until the daemon has no session and none of its children is
// left, and samples it.
func (d *daemonPhase) idle(ctx context.Context, back *DaemonSample) (DaemonSample, bool) {
	deadline := time.Now().Add(daemonTimeout)
	for {
		s, ok := d.sample(true)
		if !ok {
			return s, false
		}
		if s.Sessions == 0 && s.Children == 0 {
			// The connections that just closed take a moment to go
			// (one whose client stopped reading, up to the stall
			// timeout): the figures are the least over a few quiet
			// seconds, or, given the figures to come back to, over
			// up to settleFor until they are back within the slack.
			for i := 0; ; i++ {
				done := i >= 6
				if back != nil {
					done = s.FDs <= back.FDs+daemonFDSlack && s.Goroutines <= back.Goroutines+daemonGoroutineSlack || i >= int(settleFor/(500*time.Millisecond))
				}
				if done {
					break
				}
				time.Sleep(500 * time.Millisecond)
				x, ok := d.sample(true)
				if !ok {
					return x, false
				}
				s.FDs, s.Goroutines, s.RSS = min(s.FDs, x.FDs), min(s.Goroutines, x.Goroutines), min(s.RSS, x.RSS)
				s.At, s.Logs, s.Stderr = x.At, x.Logs, x.Stderr
			}
			return s, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			d.run.failf("daemon", "not idle %v after its clients left: %d sessions, %d children (%s)", daemonTimeout, s.Sessions, s.Children, describe(marked(d.mark, false, d.cmd.Process.Pid)))
			return s, false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// check holds the idle daemon at the end to its figures after the
// warm-up.
func (d *daemonPhase) check() {
	a, b := d.res.Start, d.res.End
	if b.FDs > a.FDs+daemonFDSlack {
		d.run.failf("daemon", "%d descriptors when idle at the end, %d after the warm-up (slack %d)", b.FDs, a.FDs, daemonFDSlack)
	}
	if b.Goroutines > a.Goroutines+daemonGoroutineSlack {
		d.run.failf("daemon", "%d goroutines when idle at the end, %d after the warm-up (slack %d)", b.Goroutines, a.Goroutines, daemonGoroutineSlack)
	}
	d.mu.Lock()
	sessions, conns := len(d.sessions), d.stats.Connections
	d.mu.Unlock()
	if grew, most := b.Stderr-a.Stderr, int64(sessions*stderrPerSession+conns*stderrPerConnection); grew > most {
		d.run.failf("daemon", "its stderr grew by %d bytes for %d sessions and %d connections, over %d; its end:\n%s", grew, sessions, conns, most, d.stderr)
	}
	if b.At-a.At >= daemonGrowthFrom {
		if g := float64(b.RSS)/float64(a.RSS) - 1; g > daemonGrowth && b.RSS-a.RSS > daemonGrowthBytes {
			d.run.failf("daemon", "its idle memory grew %.1f%% (%.1f to %.1f MiB), over %.0f%% and %d MiB", 100*g, float64(a.RSS)/(1<<20), float64(b.RSS)/(1<<20), 100*daemonGrowth, daemonGrowthBytes>>20)
		}
	}
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// dclient is one client of the daemon phase.
type dclient struct {
	d   *daemonPhase
	rnd *rand.Rand
}

func (d *daemonPhase) client(rnd *rand.Rand) *dclient { return &dclient{d: d, rnd: rnd} }

func (d *daemonPhase) count(f func(s *DaemonStats)) {
	d.mu.Lock()
	f(&d.stats)
	d.mu.Unlock()
}

// loop takes random actions until the run's end.
func (c *dclient) loop(ctx context.Context) {
	for time.Now().Before(c.d.run.end) && ctx.Err() == nil {
		select {
		case <-c.d.exited:
			c.d.run.failf("daemon", "exited during the run: %v; stderr:\n%s", c.d.cmd.ProcessState, c.d.stderr)
			return
		default:
		}
		switch n := c.rnd.IntN(10); {
		case n < 3:
			c.prompt(ctx, false)
		case n < 5:
			c.prompt(ctx, true)
		case n < 6:
			c.leaveMidTurn(ctx)
		case n < 7:
			c.load(ctx)
		case n < 8:
			c.cancel(ctx)
		default:
			c.reconnect(ctx)
		}
	}
}

// dconn is one connection of a client.
type dconn struct {
	c    *dclient
	nc   net.Conn
	br   *bufio.Reader
	next int
	slow bool
}

// dframe is a message from the daemon.
type dframe struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// throttled reads at most rate bytes a second.
type throttled struct {
	r     io.Reader
	rate  int
	start time.Time
	n     int
}

func (t *throttled) Read(p []byte) (int, error) {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	if due := time.Duration(float64(t.n) / float64(t.rate) * float64(time.Second)); time.Since(t.start) < due {
		time.Sleep(due - time.Since(t.start))
	}
	n, err := t.r.Read(p[:min(len(p), 1024)])
	t.n += n
	return n, err
}

func (c *dclient) dial() (*dconn, bool) {
	nc, err := net.DialTimeout("unix", c.d.sock, 10*time.Second)
	if err != nil {
		c.d.run.failf("daemon", "connecting: %v", err)
		return nil, false
	}
	c.d.count(func(s *DaemonStats) { s.Connections++ })
	return &dconn{c: c, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}, true
}

// slowly makes the connection read at slowReaderRate. What the reader
// holds already is read first: dropping it would cut a line in two.
func (k *dconn) slowly() {
	k.slow = true
	held, _ := k.br.Peek(k.br.Buffered())
	held = append([]byte(nil), held...)
	k.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(held), &throttled{r: k.nc, rate: slowReaderRate}), 64<<10)
}

func (k *dconn) close() { _ = k.nc.Close() }

// send sends a request and returns its id.
func (k *dconn) send(method, params string) string {
	k.next++
	id := fmt.Sprint(k.next)
	_ = k.nc.SetWriteDeadline(time.Now().Add(daemonTimeout))
	_, _ = fmt.Fprintf(k.nc, `{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`+"\n", id, method, params)
	return id
}

// read returns the next message, within the bound.
func (k *dconn) read() (dframe, error) {
	_ = k.nc.SetReadDeadline(time.Now().Add(daemonTimeout))
	line, err := k.br.ReadBytes('\n')
	if err != nil {
		return dframe{}, err
	}
	var f dframe
	if err := json.Unmarshal(line, &f); err != nil {
		return dframe{}, fmt.Errorf("a line that is not JSON: %.200q", line)
	}
	if f.Method == "_zot/notify" {
		k.c.d.count(func(s *DaemonStats) { s.Notices++ })
	}
	if f.Method == "session/request_permission" {
		_, _ = fmt.Fprintf(k.nc, `{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`+"\n", f.ID)
	}
	return f, nil
}

// await reads up to the answer to id; stop, when it returns true for a
// message before it, ends the wait early (nil frame, no error).
func (k *dconn) await(id string, stop func(dframe) bool) (*dframe, error) {
	for {
		f, err := k.read()
		if err != nil {
			return nil, err
		}
		if f.Method == "" && string(f.ID) == id {
			if f.Error != nil {
				return &f, fmt.Errorf("error %d: %s", f.Error.Code, f.Error.Message)
			}
			return &f, nil
		}
		if stop != nil && stop(f) {
			return nil, nil
		}
	}
}

// call sends a request and waits for its answer; a failure is the soak's.
func (k *dconn) call(what, method, params string) (*dframe, bool) {
	f, err := k.await(k.send(method, params), nil)
	if err != nil {
		k.c.d.run.failf("daemon", "%s: %s: %v", what, method, err)
		return nil, false
	}
	return f, true
}

// open connects, initializes and makes a session with the misbehaving
// MCP servers; it returns the session's id.
func (c *dclient) open() (*dconn, string, bool) {
	k, ok := c.dial()
	if !ok {
		return nil, "", false
	}
	if _, ok := k.call("open", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); !ok {
		k.close()
		return nil, "", false
	}
	py := filepath.Join(c.d.dir, "mcp.py")
	servers := fmt.Sprintf(`[{"name":"flood","command":"python3","args":[%q,"flood"],"env":[]},{"name":"crashy","command":"python3","args":[%q,"crash"],"env":[]}]`, py, py)
	f, ok := k.call("open", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":%s}`, c.d.work, servers))
	if !ok {
		k.close()
		return nil, "", false
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(f.Result, &r) != nil || r.SessionID == "" {
		c.d.run.failf("daemon", "session/new answered %s", f.Result)
		k.close()
		return nil, "", false
	}
	c.d.mu.Lock()
	c.d.sessions = append(c.d.sessions, r.SessionID)
	c.d.mu.Unlock()
	return k, r.SessionID, true
}

func promptParams(id string) string {
	return fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"soak the daemon"}]}`, id)
}

// prompt runs one or two prompts to their answers, read at once or
// slowly.
func (c *dclient) prompt(ctx context.Context, slow bool) {
	k, id, ok := c.open()
	if !ok {
		return
	}
	defer k.close()
	if slow {
		k.slowly()
	}
	for range 1 + c.rnd.IntN(2) {
		if ctx.Err() != nil {
			return
		}
		c.d.count(func(s *DaemonStats) {
			s.Prompts++
			if slow {
				s.SlowPrompts++
			}
		})
		if _, ok := k.call("prompt", "session/prompt", promptParams(id)); !ok {
			return
		}
		c.d.count(func(s *DaemonStats) { s.Answered++ })
	}
}

// leaveMidTurn starts a prompt and leaves after a few of its updates.
func (c *dclient) leaveMidTurn(context.Context) {
	k, id, ok := c.open()
	if !ok {
		return
	}
	defer k.close()
	n := 1 + c.rnd.IntN(20)
	if _, err := k.await(k.send("session/prompt", promptParams(id)), func(f dframe) bool {
		if f.Method == "session/update" {
			n--
		}
		return n <= 0
	}); err != nil {
		c.d.run.failf("daemon", "mid-turn: %v", err)
		return
	}
	c.d.count(func(s *DaemonStats) { s.LeftMidTurn++ })
}

// load opens an earlier session (its history replayed) and reads it all,
// or leaves in the middle of the replay.
func (c *dclient) load(context.Context) {
	c.d.mu.Lock()
	list := slices.Clone(c.d.sessions)
	c.d.mu.Unlock()
	if len(list) == 0 {
		return
	}
	k, ok := c.dial()
	if !ok {
		return
	}
	defer k.close()
	if _, ok := k.call("load", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); !ok {
		return
	}
	sid := list[c.rnd.IntN(len(list))]
	c.d.count(func(s *DaemonStats) { s.Loads++ })
	params := fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, sid, c.d.work)
	if c.rnd.IntN(2) == 0 {
		n := 1 + c.rnd.IntN(10)
		if _, err := k.await(k.send("session/load", params), func(f dframe) bool {
			if f.Method == "session/update" {
				n--
			}
			return n <= 0
		}); err != nil && !refusedLoad(err) {
			c.d.run.failf("daemon", "mid-replay: %v", err)
			return
		}
		c.d.count(func(s *DaemonStats) { s.LeftMidReplay++ })
		return
	}
	if _, err := k.await(k.send("session/load", params), nil); err != nil && !refusedLoad(err) {
		c.d.run.failf("daemon", "session/load: %v", err)
	}
}

// refusedLoad reports whether err is a session/load the daemon refuses as
// it says it does: a session that runs a prompt (busy, 1001).
func refusedLoad(err error) bool { return strings.HasPrefix(err.Error(), "error 1001:") }

// cancel starts a prompt and cancels it once it streams; the prompt
// answers.
func (c *dclient) cancel(context.Context) {
	k, id, ok := c.open()
	if !ok {
		return
	}
	defer k.close()
	pid := k.send("session/prompt", promptParams(id))
	cancelled := false
	f, err := k.await(pid, func(f dframe) bool {
		if f.Method == "session/update" && !cancelled {
			cancelled = true
			_, _ = fmt.Fprintf(k.nc, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", id)
		}
		return false
	})
	if err != nil {
		c.d.run.failf("daemon", "cancelled prompt: %v", err)
		return
	}
	if f != nil {
		c.d.count(func(s *DaemonStats) { s.Cancels++ })
	}
}

// reconnect connects a few times in a row, asking for the session list.
func (c *dclient) reconnect(context.Context) {
	for range 2 + c.rnd.IntN(5) {
		k, ok := c.dial()
		if !ok {
			return
		}
		if _, ok := k.call("reconnect", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); ok {
			k.call("reconnect", "session/list", `{}`)
		}
		k.close()
		c.d.count(func(s *DaemonStats) { s.Reconnects++ })
	}
}

// daemonScript is the daemon's script: turns that stream text and call
// both MCP servers' tools and the built-in ones.
func daemonScript(r *rand.Rand) []byte {
	type call struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	type step struct {
		Text      string `json:"text,omitempty"`
		Chunk     int    `json:"chunk,omitempty"`
		DelayMS   int    `json:"delay_ms,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	type turn struct {
		Steps []step `json:"steps"`
	}
	tools := []call{
		{Name: "mcp__flood__echo", Args: map[string]any{"text": "through the flood"}},
		{Name: "mcp__crashy__echo", Args: map[string]any{"text": "crash"}},
		{Name: "ls", Args: map[string]any{"path": "."}},
		{Name: "read", Args: map[string]any{"path": "notes.txt"}},
	}
	words := strings.Fields("the daemon keeps its children and its clients in bounds while they misbehave")
	text := func() string {
		var b strings.Builder
		for i := range 20 + r.IntN(200) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	var turns []turn
	for range 6 {
		t := turn{Steps: []step{
			{Text: text(), Chunk: 8, DelayMS: 2, ToolCalls: []call{tools[r.IntN(len(tools))], tools[r.IntN(len(tools))]}},
			{Text: text(), Chunk: 16, DelayMS: 1},
		}}
		turns = append(turns, t)
	}
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		panic(err) // plain maps and structs always encode
	}
	return b
}

// mcpServerPy is an MCP server over stdio that misbehaves: "flood"
// answers, and prints lines that are not JSON-RPC without end once
// initialized; "crash" exits on every tool call.
const mcpServerPy = `import json, os, sys, threading
mode = sys.argv[1]
lock = threading.Lock()
def send(obj):
    data = (json.dumps(obj) + "\n").encode()
    with lock:
        os.write(1, data)
def flood():
    line = b"not json, a flood of it\n"
    while True:
        with lock:
            os.write(1, line)
for raw in sys.stdin:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
              "capabilities": {"tools": {}}, "serverInfo": {"name": "soak-" + mode, "version": "1"}}})
    elif method == "notifications/initialized":
        if mode == "flood":
            threading.Thread(target=flood, daemon=True).start()
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "echo", "description": "Says it back.",
              "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}})
    elif method == "tools/call":
        if mode == "crash":
            sys.stderr.write("crashing as asked\n")
            os._exit(3)
        text = (msg.get("params") or {}).get("arguments", {}).get("text", "")
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "echo: " + str(text)}]}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
`
