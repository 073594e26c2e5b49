package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"zot.dev/zot/bench/fakeprovider"
)

// The daemon section measures zot's ACP door (zot daemon on its socket,
// zot acp on stdio) against zot rpc, the same binary's NDJSON door, with
// the first provider: what many sessions in one process cost, and what
// the JSON-RPC door adds to a prompt.

// DaemonMetric is one measurement of the daemon section.
type DaemonMetric int

// The daemon section's measurements.
const (
	// IdleSessionKiB is the RSS growth of one daemon per idle session,
	// over Config.DaemonIdle sessions.
	IdleSessionKiB DaemonMetric = iota
	// AggregateRate is the agent_message_chunk rate of
	// Config.DaemonStreams sessions streaming at once, against one
	// session streaming alone in the same daemon.
	AggregateRate
	// PromptRoundTrip is a short prompt's session/prompt over the socket
	// against the same prompt over zot rpc.
	PromptRoundTrip
	// SpawnInitialize is zot acp's spawn to initialize answered against
	// zot rpc's spawn to ping answered.
	SpawnInitialize
	// ChunkRate is the agent_message_chunk rate of a Config.Deltas answer
	// over zot acp against the text_delta rate over zot rpc.
	ChunkRate
	// PromptRoundTripTmpfs is PromptRoundTrip with the daemon's session
	// files in memory (/dev/shm): the door without the disk's syncs.
	PromptRoundTripTmpfs
	// PrintAnswer is zot -p's exec to exit with a short answer printed,
	// against zot rpc's exec to the done of its first short prompt.
	PrintAnswer
	daemonMetrics
)

// DaemonRow is one line of the daemon section: the samples of the door
// measured and of its baseline.
type DaemonRow struct {
	Metric         DaemonMetric
	Value, Base    []float64
	Unit, BaseName string
	Err            string
}

// DaemonSection is the daemon section of a report.
type DaemonSection struct {
	Provider string
	Rows     []DaemonRow
}

// daemonTargets are the goals of the section: a bound on the value
// itself (IdleSessionKiB) or on value ÷ baseline.
var daemonTargets = [daemonMetrics]struct {
	max   bool // the target is an upper bound
	bound float64
	text  string
}{
	IdleSessionKiB:  {true, 50, "≤ 50 KiB"},
	AggregateRate:   {false, 1.6, "≥ 1.6×"},
	PromptRoundTrip: {true, 1.1, "≤ 1.1×"},
	SpawnInitialize: {true, 1.5, "≤ 1.5×"},
	ChunkRate:       {false, 0.8, "≥ 0.8×"},
	// The goal of the prompt round trip, for the door alone.
	PromptRoundTripTmpfs: {true, 1.1, "≤ 1.1×"},
	// Print mode starts its extensions and MCP servers before the prompt
	// and stops them after it, which zot rpc does not wait for.
	PrintAnswer: {true, 1.5, "≤ 1.5×"},
}

// label names a metric in the report.
func (m DaemonMetric) label(cfg Config) string {
	switch m {
	case IdleSessionKiB:
		return fmt.Sprintf("RSS per idle session (%d sessions in one daemon)", cfg.DaemonIdle)
	case AggregateRate:
		return fmt.Sprintf("chunks/s of %d sessions streaming at once vs 1 alone (%d deltas each)", cfg.DaemonStreams, cfg.DaemonDeltas)
	case PromptRoundTrip:
		return "short prompt round trip: session/prompt on the socket vs prompt→done on zot rpc"
	case SpawnInitialize:
		return "zot acp spawn → initialize answered vs zot rpc spawn → ping"
	case ChunkRate:
		return fmt.Sprintf("agent_message_chunk/s on zot acp vs text_delta/s on zot rpc (%d deltas)", cfg.Deltas)
	case PromptRoundTripTmpfs:
		return "the same round trip, the daemon's session files on tmpfs (no disk sync)"
	case PrintAnswer:
		return "zot -p exec → exit with a short answer vs zot rpc exec → its first short prompt's done"
	}
	return "?"
}

// daemonSection measures the section for zot and adds it to report.
func (h *harness) daemonSection(ctx context.Context, report *Report) error {
	p := h.cfg.Providers[0]
	rows := make([]DaemonRow, daemonMetrics)
	for i := range rows {
		rows[i].Metric = DaemonMetric(i)
	}
	fail := func(m DaemonMetric, err error) {
		if rows[m].Err == "" {
			rows[m].Err = err.Error()
		}
	}
	for rep := range h.cfg.Reps {
		if err := h.daemonRep(ctx, p, rows, fail); err != nil {
			return err
		}
		var status []string
		for _, r := range rows {
			if r.Err != "" {
				status = append(status, "error")
			} else {
				status = append(status, fmt.Sprintf("%.4g/%.4g", median(r.Value), median(r.Base)))
			}
		}
		h.logf("daemon rep %d/%d: %s", rep+1, h.cfg.Reps, strings.Join(status, ", "))
	}
	report.Daemon = &DaemonSection{Provider: p, Rows: rows}
	return nil
}

// daemonRep runs one repetition of every measurement of the section.
// One zot rpc process serves the baselines of the round trips, each
// measured in blocks alternating with the daemon's (see roundTrips), and
// of the chunk rate.
func (h *harness) daemonRep(ctx context.Context, p string, rows []DaemonRow, fail func(DaemonMetric, error)) error {
	zot := resolve(h.cfg.Zot)
	c, err := spawn(ctx, zot, h.args(p), h.dir, h.acpEnv(), h.cfg.Timeout)
	if err == nil {
		if err = c.ping(); err != nil {
			err = c.fail(err)
			_ = c.reap(h.cfg.Timeout)
		}
	}
	if err != nil {
		fail(PromptRoundTrip, err)
		fail(PromptRoundTripTmpfs, err)
		fail(ChunkRate, err)
		c = nil
	}
	// One daemon: idle sessions, then streams, then round trips.
	if d, err := h.startDaemon(ctx, zot, p); err != nil {
		for m := range daemonMetrics {
			if m != SpawnInitialize && m != ChunkRate && m != PromptRoundTripTmpfs {
				fail(m, err)
			}
		}
	} else {
		if kib, err := d.idleSessions(h.cfg.DaemonIdle); err != nil {
			fail(IdleSessionKiB, err)
		} else {
			rows[IdleSessionKiB].Value = append(rows[IdleSessionKiB].Value, kib)
		}
		if many, one, err := d.streams(h.cfg.DaemonStreams, h.cfg.DaemonDeltas); err != nil {
			fail(AggregateRate, err)
		} else {
			rows[AggregateRate].Value = append(rows[AggregateRate].Value, many)
			rows[AggregateRate].Base = append(rows[AggregateRate].Base, one)
		}
		if c != nil {
			h.roundTripRow(d, c, &rows[PromptRoundTrip], fail)
		}
		if err := d.stop(h.cfg.Timeout); err != nil {
			fail(PromptRoundTrip, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The round trip again, the session files in memory.
	if shm, err := os.MkdirTemp("/dev/shm", "zot-bench-"); err != nil {
		fail(PromptRoundTripTmpfs, fmt.Errorf("no tmpfs: %w", err))
	} else {
		if d, err := h.startDaemonIn(ctx, zot, p, shm); err != nil {
			fail(PromptRoundTripTmpfs, err)
		} else {
			if c != nil {
				h.roundTripRow(d, c, &rows[PromptRoundTripTmpfs], fail)
			}
			if err := d.stop(h.cfg.Timeout); err != nil {
				fail(PromptRoundTripTmpfs, err)
			}
		}
		_ = os.RemoveAll(shm)
	}
	// zot rpc: the long answer's rate.
	if c != nil {
		for i := range 1 + chunkSamples {
			rate, err := c.deltaRate(h.cfg.Deltas)
			if err != nil {
				fail(ChunkRate, c.fail(err))
				break
			}
			if i > 0 { // the first answer warms the process up
				rows[ChunkRate].Base = append(rows[ChunkRate].Base, rate)
			}
		}
		if err := c.reap(h.cfg.Timeout); err != nil {
			fail(ChunkRate, err)
		}
	}
	// zot acp: spawn → initialize, and the long answer's chunk rate.
	if err := h.acpRep(ctx, zot, p, rows, fail); err != nil {
		return err
	}
	// zot -p against zot rpc's first prompt, in turns.
	for range spawnSamples {
		d, err := h.printAnswer(ctx, zot, p)
		if err != nil {
			fail(PrintAnswer, err)
			break
		}
		rows[PrintAnswer].Value = append(rows[PrintAnswer].Value, d)
		if d, err = h.firstAnswer(ctx, zot, p); err != nil {
			fail(PrintAnswer, err)
			break
		}
		rows[PrintAnswer].Base = append(rows[PrintAnswer].Base, d)
	}
	// zot rpc spawn → ping.
	for range spawnSamples {
		start := time.Now()
		c, err := spawn(ctx, zot, h.args(p), h.dir, h.acpEnv(), h.cfg.Timeout)
		if err != nil {
			fail(SpawnInitialize, err)
			break
		}
		if err := c.ping(); err != nil {
			fail(SpawnInitialize, c.fail(err))
			break
		}
		rows[SpawnInitialize].Base = append(rows[SpawnInitialize].Base, ms(time.Since(start)))
		_ = c.reap(h.cfg.Timeout)
	}
	return ctx.Err()
}

// printAnswer runs zot -p with a short prompt and returns the time from
// exec to its exit, in milliseconds; the answer must be on stdout.
func (h *harness) printAnswer(ctx context.Context, zot, p string) (float64, error) {
	args := append([]string{"-p", fakeprovider.PromptShort}, h.args(p)[1:]...)
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, zot, args...)
	cmd.Dir, cmd.Env = h.dir, h.acpEnv()
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err := cmd.Run()
	d := ms(time.Since(start))
	if err != nil {
		return 0, fmt.Errorf("zot -p: %w; stderr: %s", err, strings.TrimSpace(stderr.String()))
	}
	if !strings.Contains(out.String(), "briefly.") {
		return 0, fmt.Errorf("zot -p printed %.200q, not the short answer", out.String())
	}
	return d, nil
}

// firstAnswer spawns zot rpc and returns the time from exec to the done
// of its first short prompt, in milliseconds.
func (h *harness) firstAnswer(ctx context.Context, zot, p string) (float64, error) {
	start := time.Now()
	c, err := spawn(ctx, zot, h.args(p), h.dir, h.acpEnv(), h.cfg.Timeout)
	if err != nil {
		return 0, err
	}
	if _, err := c.prompt(fakeprovider.PromptShort); err != nil {
		return 0, c.fail(err)
	}
	d := ms(time.Since(start))
	if err := c.reap(h.cfg.Timeout); err != nil {
		return 0, fmt.Errorf("zot rpc after stdin closed: %w", err)
	}
	return d, nil
}

// roundTripRow measures the short prompt's round trip on daemon d
// against zot rpc's c into row.
func (h *harness) roundTripRow(d *daemonProc, c *child, row *DaemonRow, fail func(DaemonMetric, error)) {
	door, base, err := d.roundTrips(c, h.cfg.Seq)
	if err != nil {
		fail(row.Metric, err)
		return
	}
	row.Value = append(row.Value, door)
	row.Base = append(row.Base, base)
}

// spawnSamples is how many processes each repetition spawns per door for
// SpawnInitialize.
const spawnSamples = 5

// chunkSamples is how many long answers each repetition times per door
// for ChunkRate, after one untimed answer that warms the process up (the
// zot acp process is new; zot rpc's has served the round trips): one
// answer's rate moves by half its value from one to the next on a
// shared machine.
const chunkSamples = 3

// deltaRate sends zot rpc a prompt answered with n deltas, in a
// transcript cleared first, and returns its text_delta rate from writing
// the prompt to reading its done.
func (c *child) deltaRate(n int) (float64, error) {
	if err := c.clear(); err != nil {
		return 0, err
	}
	deltas, elapsed, err := c.scanPrompt(fakeprovider.PromptDeltas(n))
	if err != nil {
		return 0, err
	}
	if deltas != n {
		return 0, fmt.Errorf("%d text_delta for %d deltas", deltas, n)
	}
	return float64(deltas) / elapsed.Seconds(), nil
}

// scanPrompt sends zot rpc a prompt and returns how many text_delta
// events came before its done, and the time from writing the prompt to
// reading the done. Lines are told apart by substrings, as
// rpcClient.prompt does on the ACP side, so both doors pay the same for
// the harness's reading.
func (c *child) scanPrompt(message string) (int, time.Duration, error) {
	if err := c.arm(); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	id, err := c.send("prompt", message)
	if err != nil {
		return 0, 0, err
	}
	delta := []byte(`"type":"text_delta"`)
	done := []byte(`{"type":"done","seq":`)
	mine := []byte(`"prompt_id":"` + id + `"`)
	deltas := 0
	for {
		line, err := c.readLine()
		if err != nil {
			return 0, 0, fmt.Errorf("reading the prompt's events: %w", err)
		}
		switch {
		case bytes.Contains(line, delta):
			deltas++
		case bytes.HasPrefix(line, done) && bytes.Contains(line, mine):
			return deltas, time.Since(start), nil
		case bytes.Contains(line, []byte(`"success":false`)), bytes.HasPrefix(line, []byte(`{"type":"error"`)):
			return 0, 0, fmt.Errorf("the prompt failed: %.300s", line)
		}
	}
}

// clear empties zot rpc's transcript.
func (c *child) clear() error {
	if err := c.arm(); err != nil {
		return err
	}
	id, err := c.send("clear", "")
	if err != nil {
		return err
	}
	for {
		f, err := c.next()
		if err != nil {
			return fmt.Errorf("waiting for the clear response: %w", err)
		}
		if !f.isResponse(id) {
			continue
		}
		if f.Success == nil || !*f.Success {
			return fmt.Errorf("clear refused: %s", f.failure())
		}
		return nil
	}
}

// acpArgs are the arguments of zot daemon and zot acp: the agent flags of
// zot rpc, with every tool allowed.
func (h *harness) acpArgs(door, p string) []string {
	args := h.args(p)
	return append([]string{door, "--permission", "allow"}, args[1:]...)
}

// acpRep measures zot acp: spawn → initialize answered, then, in the
// last process, the chunk rate of the long answer.
func (h *harness) acpRep(ctx context.Context, zot, p string, rows []DaemonRow, fail func(DaemonMetric, error)) error {
	for i := range spawnSamples {
		start := time.Now()
		c, err := spawn(ctx, zot, h.acpArgs("acp", p), h.dir, h.acpEnv(), h.cfg.Timeout)
		if err != nil {
			fail(SpawnInitialize, err)
			fail(ChunkRate, err)
			return ctx.Err()
		}
		rc := &rpcClient{write: c.write, read: c.readLine, arm: c.arm}
		if _, err := rc.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, nil); err != nil {
			fail(SpawnInitialize, c.fail(err))
			fail(ChunkRate, err)
			return ctx.Err()
		}
		rows[SpawnInitialize].Value = append(rows[SpawnInitialize].Value, ms(time.Since(start)))
		if i == spawnSamples-1 {
			for i := range 1 + chunkSamples {
				rate, err := rc.chunkRate(h.dir, h.cfg.Deltas)
				if err != nil {
					fail(ChunkRate, c.fail(err))
					break
				}
				if i > 0 { // the first answer warms the process up
					rows[ChunkRate].Value = append(rows[ChunkRate].Value, rate)
				}
			}
		}
		if err := c.reap(h.cfg.Timeout); err != nil {
			fail(ChunkRate, err)
		}
	}
	return ctx.Err()
}

// acpEnv is the environment of zot daemon and zot acp: a zot home of
// their own, under the children's directory.
func (h *harness) acpEnv() []string { return h.acpEnvIn(filepath.Join(h.dir, "zot-home")) }

// acpEnvIn is acpEnv with the zot home at home.
func (h *harness) acpEnvIn(home string) []string {
	return append(childEnv(), "ZOT_HOME="+home, "ZOT_SOCKET="+filepath.Join(h.dir, "d.sock"))
}

// rpcClient is the harness's side of a JSON-RPC connection: it writes
// requests, reads lines, answers nothing (the agent runs with
// --permission allow, so it asks nothing).
type rpcClient struct {
	write func([]byte) error
	read  func() ([]byte, error)
	arm   func() error
	ids   int
}

// call sends a request and reads until its answer, handing every other
// line to seen (when not nil); it returns the answer's result.
func (rc *rpcClient) call(method, params string, seen func(line []byte)) (json.RawMessage, error) {
	if err := rc.arm(); err != nil {
		return nil, err
	}
	rc.ids++
	id := strconv.Itoa(rc.ids)
	if err := rc.write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + "}\n")); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	idMember := []byte(`"id":` + id + `,`)
	idEnd := []byte(`"id":` + id + `}`)
	for {
		line, err := rc.read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		// Only answers carry an id this client gave; requests from the
		// agent carry its own ("zot-1", …), notifications none.
		if !bytes.Contains(line, []byte(`"method"`)) && (bytes.Contains(line, idMember) || bytes.Contains(line, idEnd)) {
			var ans struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &ans); err != nil {
				return nil, fmt.Errorf("%s: answer %.200q: %w", method, line, err)
			}
			if ans.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, ans.Error.Message)
			}
			return ans.Result, nil
		}
		if seen != nil {
			seen(line)
		}
	}
}

// newSession opens a session in dir and returns its id.
func (rc *rpcClient) newSession(dir string) (string, error) {
	res, err := rc.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, dir), nil)
	if err != nil {
		return "", err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &s); err != nil || s.SessionID == "" {
		return "", fmt.Errorf("session/new answered %.200s", res)
	}
	return s.SessionID, nil
}

// prompt sends text to session id and returns how many
// agent_message_chunk updates came before the answer.
func (rc *rpcClient) prompt(id, text string) (int, error) {
	chunks := 0
	chunk := []byte(`"agent_message_chunk"`)
	res, err := rc.call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, id, text), func(line []byte) {
		if bytes.Contains(line, chunk) {
			chunks++
		}
	})
	if err != nil {
		return chunks, err
	}
	if !bytes.Contains(res, []byte(`"end_turn"`)) {
		return chunks, fmt.Errorf("session/prompt answered %.200s", res)
	}
	return chunks, nil
}

// chunkRate opens a session and returns the agent_message_chunk rate of
// an answer of n deltas, from writing the prompt to reading its answer.
func (rc *rpcClient) chunkRate(dir string, n int) (float64, error) {
	id, err := rc.newSession(dir)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	chunks, err := rc.prompt(id, fakeprovider.PromptDeltas(n))
	if err != nil {
		return 0, err
	}
	if chunks != n {
		return 0, fmt.Errorf("%d agent_message_chunk for %d deltas", chunks, n)
	}
	return float64(chunks) / time.Since(start).Seconds(), nil
}

// daemonProc is a running zot daemon.
type daemonProc struct {
	h       *harness
	cmd     *exec.Cmd
	sock    string
	stderr  *tail
	timeout time.Duration
	wait    func(grace time.Duration) error // waits for the exit, kills after grace
}

// startDaemon starts zot daemon and waits until its socket accepts.
func (h *harness) startDaemon(ctx context.Context, zot, p string) (*daemonProc, error) {
	return h.startDaemonIn(ctx, zot, p, filepath.Join(h.dir, "zot-home"))
}

// startDaemonIn is startDaemon with the zot home at home.
func (h *harness) startDaemonIn(ctx context.Context, zot, p, home string) (*daemonProc, error) {
	env := h.acpEnvIn(home)
	sock := filepath.Join(h.dir, "d.sock")
	_ = os.RemoveAll(filepath.Join(home, "sessions")) // each repetition starts empty
	cmd := exec.CommandContext(ctx, zot, h.acpArgs("daemon", p)...)
	cmd.Dir, cmd.Env = h.dir, env
	d := &daemonProc{h: h, cmd: cmd, sock: sock, stderr: &tail{}, timeout: h.cfg.Timeout}
	cmd.Stderr = d.stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting zot daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	d.wait = func(grace time.Duration) error {
		select {
		case err := <-exited:
			return err
		case <-time.After(grace):
			killGroup(cmd)
			<-exited
			return fmt.Errorf("killed %v after SIGTERM", grace)
		}
	}
	deadline := time.Now().Add(h.cfg.Timeout)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			return d, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("zot daemon exited (%v): %s", err, d.stderr.String())
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			killGroup(cmd)
			<-exited
			return nil, fmt.Errorf("zot daemon did not listen on %s: %s", sock, d.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dial opens a client of the daemon, initialized.
func (d *daemonProc) dial() (*rpcClient, net.Conn, error) {
	c, err := net.Dial("unix", d.sock)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to the daemon: %w", err)
	}
	br := bufio.NewReaderSize(c, 256<<10)
	rc := &rpcClient{
		write: func(b []byte) error { _, err := c.Write(b); return err },
		read: func() ([]byte, error) {
			line, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				long := append([]byte(nil), line...)
				for errors.Is(err, bufio.ErrBufferFull) {
					line, err = br.ReadSlice('\n')
					long = append(long, line...)
				}
				line = long
			}
			return line, err
		},
		arm: func() error { return c.SetDeadline(time.Now().Add(d.timeout)) },
	}
	if _, err := rc.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, nil); err != nil {
		c.Close()
		return nil, nil, err
	}
	return rc, c, nil
}

// idleSessions opens n sessions on one connection and returns the
// daemon's RSS growth per session in KiB, measured after one session was
// opened (so what every daemon allocates once is not counted).
func (d *daemonProc) idleSessions(n int) (float64, error) {
	rc, c, err := d.dial()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := rc.newSession(d.h.dir); err != nil {
		return 0, err
	}
	time.Sleep(200 * time.Millisecond)
	before, err := readRSS(d.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	for i := range n {
		if _, err := rc.newSession(d.h.dir); err != nil {
			return 0, fmt.Errorf("session %d: %w", i+1, err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	after, err := readRSS(d.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / 1024 / float64(n), nil
}

// aloneSamples is how many answers one session streams alone for the
// baseline of AggregateRate.
const aloneSamples = 5

// streams returns the aggregate chunk rate of n sessions, each on its
// own connection, streaming an answer of deltas at once, and that of one
// session streaming it alone (the median of aloneSamples answers).
func (d *daemonProc) streams(n, deltas int) (many, one float64, err error) {
	type client struct {
		rc *rpcClient
		c  net.Conn
		id string
	}
	clients := make([]client, n)
	defer func() {
		for _, cl := range clients {
			if cl.c != nil {
				cl.c.Close()
			}
		}
	}()
	for i := range clients {
		rc, c, err := d.dial()
		if err != nil {
			return 0, 0, err
		}
		id, err := rc.newSession(d.h.dir)
		if err != nil {
			c.Close()
			return 0, 0, err
		}
		clients[i] = client{rc, c, id}
	}
	prompt := fakeprovider.PromptDeltas(deltas)
	// One answer alone lasts a few milliseconds: the median of several
	// keeps a moment of quiet or of load from making the baseline.
	alone := make([]float64, 0, aloneSamples)
	for range aloneSamples {
		start := time.Now()
		if _, err := clients[0].rc.prompt(clients[0].id, prompt); err != nil {
			return 0, 0, err
		}
		alone = append(alone, float64(deltas)/time.Since(start).Seconds())
	}
	one = median(alone)
	var wg sync.WaitGroup
	errs := make([]error, n)
	counts := make([]int, n)
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = clients[i].rc.prompt(clients[i].id, prompt)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := 0
	for i := range clients {
		if errs[i] != nil {
			return 0, 0, fmt.Errorf("session %d of %d: %w", i+1, n, errs[i])
		}
		total += counts[i]
	}
	if total != n*deltas {
		return 0, 0, fmt.Errorf("%d chunks from %d sessions of %d deltas", total, n, deltas)
	}
	return float64(total) / elapsed.Seconds(), one, nil
}

// roundTripBlock is how many short prompts go to one door before the
// other takes its turn in roundTrips.
const roundTripBlock = 10

// roundTrips returns the median round trip of n short prompts in
// sequence on one new session of the daemon (written to answered) and
// that of n short prompts on zot rpc's c, its transcript cleared first
// (written to done). The two doors take turns, a block of prompts each,
// so that a change of load on the shared machine meets both.
func (d *daemonProc) roundTrips(c *child, n int) (door, base float64, err error) {
	rc, conn, err := d.dial()
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	id, err := rc.newSession(d.h.dir)
	if err != nil {
		return 0, 0, err
	}
	if err := c.clear(); err != nil {
		return 0, 0, err
	}
	socket := make([]float64, 0, n)
	rpc := make([]float64, 0, n)
	for len(socket) < n {
		for range min(roundTripBlock, n-len(socket)) {
			start := time.Now()
			chunks, err := rc.prompt(id, fakeprovider.PromptShort)
			if err != nil {
				return 0, 0, fmt.Errorf("prompt %d on the socket: %w", len(socket)+1, err)
			}
			if chunks == 0 {
				return 0, 0, fmt.Errorf("prompt %d on the socket streamed no text", len(socket)+1)
			}
			socket = append(socket, ms(time.Since(start)))
		}
		for range min(roundTripBlock, n-len(rpc)) {
			deltas, elapsed, err := c.scanPrompt(fakeprovider.PromptShort)
			if err != nil {
				return 0, 0, fmt.Errorf("prompt %d on zot rpc: %w", len(rpc)+1, c.fail(err))
			}
			if deltas == 0 {
				return 0, 0, fmt.Errorf("prompt %d on zot rpc streamed no text", len(rpc)+1)
			}
			rpc = append(rpc, ms(elapsed))
		}
	}
	return median(socket), median(rpc), nil
}

// stop ends the daemon with SIGTERM, and kills it after grace.
func (d *daemonProc) stop(grace time.Duration) error {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.wait(grace); err != nil {
		return fmt.Errorf("zot daemon after SIGTERM: %w: %s", err, d.stderr.String())
	}
	return nil
}

// readRSS returns a running process's resident set size in bytes (VmRSS).
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("reading RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n * 1024, nil
				}
			}
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// writeDaemon renders the daemon section.
func (r *Report) writeDaemon(sb *strings.Builder) {
	s := r.Daemon
	fmt.Fprintf(sb, "\n### daemon (%s format)\n\n", s.Provider)
	sb.WriteString("zot daemon on its Unix socket and zot acp on stdio, against zot rpc (the same binary's NDJSON door) " +
		"in the same run. Idle memory is the daemon's VmRSS growth over the sessions ÷ their number, after one session was opened. " +
		"Rates count agent_message_chunk (text_delta on zot rpc) from writing the prompt to reading its answer.\n\n")
	writeRow(sb, []string{"metric", "target", "value", "baseline", "ratio"})
	writeRow(sb, []string{"---", "---", "---:", "---:", "---:"})
	for _, row := range s.Rows {
		t := daemonTargets[row.Metric]
		cells := []string{row.Metric.label(r.Config), t.text}
		if row.Err != "" || len(row.Value) == 0 {
			msg := row.Err
			if msg == "" {
				msg = "no sample"
			}
			cells = append(cells, "error: "+escape(msg), "", "")
			writeRow(sb, cells)
			continue
		}
		v := median(row.Value)
		unit := "ms"
		switch row.Metric {
		case IdleSessionKiB:
			unit = "KiB"
		case AggregateRate, ChunkRate:
			unit = "/s"
		}
		cells = append(cells, fmt.Sprintf("%.4g %s", v, unit))
		measured := v
		if row.Metric == IdleSessionKiB {
			cells = append(cells, "—")
		} else {
			b := median(row.Base)
			cells = append(cells, fmt.Sprintf("%.4g %s", b, unit))
			measured = v / b
		}
		verdict := "pass"
		if (t.max && measured > t.bound) || (!t.max && measured < t.bound) {
			verdict = "**FAIL**"
		}
		if row.Metric == IdleSessionKiB {
			cells = append(cells, verdict)
		} else {
			cells = append(cells, fmt.Sprintf("%.2f× %s", measured, verdict))
		}
		writeRow(sb, cells)
	}
}
