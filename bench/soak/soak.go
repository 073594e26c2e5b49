//go:build linux

package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"zot.dev/zot/sdk/wire"
)

// Config is one soak run.
type Config struct {
	// Zot is the path of the zot binary.
	Zot string
	// Duration is how long the lanes send traffic.
	Duration time.Duration
	// Seed makes the run's choices; the same seed sends the same traffic
	// (the timing of what comes back still varies).
	Seed uint64
	// Dir is a scratch directory for the processes' working directories
	// and scripts.
	Dir string
	// Logf receives progress lines; nil discards them.
	Logf func(format string, args ...any)
	// NoDaemon leaves out the daemon phase (see daemon.go).
	NoDaemon bool
}

// Bounds of the traffic. Every wait has a limit, so a process that stops
// answering costs a failure and a restart, never a hang.
const (
	maxLine       = 256 << 10        // --max-line-bytes of every process
	maxBurst      = 6                // commands per burst
	settleTimeout = 60 * time.Second // for a burst's answers and endings
	exitTimeout   = 20 * time.Second // for a process to exit (zot promises ~5 s after a signal)
	leakGrace     = 5 * time.Second  // for a tool process to go once its zot has let go of it
	maxFailures   = 50               // failures kept in full
	maxActions    = 1_000_000        // per lane, whatever the duration
)

// Stats counts what a run did.
type Stats struct {
	// Processes started, and how they ended.
	Processes, ExitsEOF, ExitsSignal int
	// Actions taken: bursts of commands and aborts mid-turn (the rest of
	// the actions end processes).
	Actions, Bursts, MidTurnAborts int
	// Commands sent (Malformed of them lines that are not commands),
	// frames read (Events of them events).
	Commands, Malformed, Frames, Events int
	// Prompts and compacts accepted, and dones read.
	Prompts, Compacts, Dones int
	// Aborted counts aborts that cut running work (answered aborted=true);
	// Dropped counts queued items dropped by abort all.
	Aborted, Dropped int
	// ToolCalls counts tool_call events.
	ToolCalls int
	// EarlySignals counts signals sent before the process had answered
	// anything that killed it (as they may, before zot handles signals)
	// instead of making it exit with 128 + the signal.
	EarlySignals int
	// LeakChecks counts the checks for processes left behind, and
	// MaxLeakWait is the longest a check waited for them to go.
	LeakChecks  int
	MaxLeakWait time.Duration
}

func (s *Stats) add(o Stats) {
	s.Processes += o.Processes
	s.ExitsEOF += o.ExitsEOF
	s.ExitsSignal += o.ExitsSignal
	s.EarlySignals += o.EarlySignals
	s.Actions += o.Actions
	s.Bursts += o.Bursts
	s.MidTurnAborts += o.MidTurnAborts
	s.Commands += o.Commands
	s.Frames += o.Frames
	s.Events += o.Events
	s.Prompts += o.Prompts
	s.Compacts += o.Compacts
	s.Dones += o.Dones
	s.Aborted += o.Aborted
	s.Dropped += o.Dropped
	s.ToolCalls += o.ToolCalls
	s.Malformed += o.Malformed
	s.LeakChecks += o.LeakChecks
	s.MaxLeakWait = max(s.MaxLeakWait, o.MaxLeakWait)
}

// Sample is one reading of the long-lived process while idle.
type Sample struct {
	At  time.Duration // since the run started
	RSS int64         // VmRSS, bytes
	FDs int
}

// Result is what a run found.
type Result struct {
	Stats Stats
	// Failures are the broken promises, the first maxFailures of
	// FailureCount.
	Failures     []string
	FailureCount int
	// Samples are the long-lived process's readings, in order.
	Samples []Sample
	// Elapsed is how long the run took.
	Elapsed time.Duration
	// Daemon is what the daemon phase found.
	Daemon *DaemonResult
}

// run is a soak in progress.
type run struct {
	cfg   Config
	begin time.Time
	end   time.Time
	id    string // prefix of every mark of the run

	mu  sync.Mutex
	res Result
}

// Run soaks cfg.Zot for cfg.Duration and returns what it found. It fails
// only when the soak itself cannot run.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if _, err := os.Stat(cfg.Zot); err != nil {
		return nil, fmt.Errorf("zot binary: %w", err)
	}
	r := &run{cfg: cfg, begin: time.Now(), id: fmt.Sprintf("soak%d.%d", os.Getpid(), cfg.Seed)}
	r.end = r.begin.Add(cfg.Duration)
	lanes := []*lane{
		{run: r, name: "long", long: true, rnd: rand.New(rand.NewPCG(cfg.Seed, 1))},
		{run: r, name: "churn", rnd: rand.New(rand.NewPCG(cfg.Seed, 2))},
	}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() { l.loop(ctx) })
	}
	if !cfg.NoDaemon {
		wg.Go(func() { r.res.Daemon = r.runDaemon(ctx, rand.New(rand.NewPCG(cfg.Seed, 3))) })
	}
	wg.Wait()
	for _, l := range lanes {
		r.res.Stats.add(l.stats)
	}
	// Whatever a lane left, nothing of the run may be running now.
	if left := marked(r.id, true, -1); len(left) > 0 {
		r.failf("run", "processes of the run still running at its end: %s", describe(left))
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	r.res.Elapsed = time.Since(r.begin)
	return &r.res, ctx.Err()
}

// failf records a broken promise.
func (r *run) failf(who, format string, args ...any) {
	msg := fmt.Sprintf("%s at %v: %s", who, time.Since(r.begin).Round(time.Millisecond), fmt.Sprintf(format, args...))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.FailureCount++
	if len(r.res.Failures) < maxFailures {
		r.res.Failures = append(r.res.Failures, msg)
	}
	r.cfg.Logf("FAIL %s", msg)
}

// lane is one stream of processes and traffic.
type lane struct {
	run   *run
	name  string
	long  bool // one process for the whole run
	rnd   *rand.Rand
	stats Stats
	procs int
}

// loop sends traffic until the run's end, ctx's end or maxActions.
func (l *lane) loop(ctx context.Context) {
	var s *session
	defer func() {
		if s != nil {
			s.finish(ctx)
		}
	}()
	for l.stats.Actions < maxActions && ctx.Err() == nil && time.Now().Before(l.run.end) {
		if s == nil {
			var err error
			if s, err = l.spawn(); err != nil {
				l.run.failf(l.name, "%v", err)
				return
			}
		}
		l.stats.Actions++
		ok := true
		switch n := l.rnd.IntN(100); {
		case !l.long && n < 6:
			s.signalMidTurn(ctx, []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}[l.rnd.IntN(2)])
			s = nil
			continue
		case !l.long && n < 10:
			s.finish(ctx)
			s = nil
			continue
		case n < 35:
			ok = s.midTurnAbort(ctx)
		default:
			ok = s.burst(ctx)
		}
		if !ok {
			s.kill()
			s = nil
			continue
		}
		if l.long {
			s.idle(ctx)
		}
	}
}

// session is one process and what the client knows of it.
type session struct {
	l      *lane
	p      *proc
	chk    checker
	mark   string
	ids    int
	since  int // prompts since the transcript was last cleared
	frames int // read from the process
	// recent holds the last lines sent and read, for failure messages.
	recent recentLines
}

// recentLines keeps the last lines of a conversation, shortened.
type recentLines struct {
	lines [40]string
	next  int
}

// add records a line, prefixed with "> " when sent.
func (r *recentLines) add(prefix string, line []byte) {
	const keep = 160
	if len(line) > keep {
		line = append(line[:keep:keep], "…"...)
	}
	r.lines[r.next%len(r.lines)] = prefix + string(line)
	r.next++
}

// String lists the kept lines, oldest first.
func (r *recentLines) String() string {
	var b strings.Builder
	for i := max(0, r.next-len(r.lines)); i < r.next; i++ {
		b.WriteString("\t" + r.lines[i%len(r.lines)] + "\n")
	}
	return b.String()
}

// spawn starts the lane's next process with a fresh script.
func (l *lane) spawn() (*session, error) {
	l.procs++
	mark := fmt.Sprintf("%s.%s%d", l.run.id, l.name, l.procs)
	dir := filepath.Join(l.run.cfg.Dir, l.name+strconv.Itoa(l.procs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("a file for the read tool\n"), 0o644); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, scriptJSON(l.rnd), 0o644); err != nil {
		return nil, err
	}
	p, err := start(l.run.cfg.Zot, dir, script, mark, maxLine)
	if err != nil {
		return nil, err
	}
	l.stats.Processes++
	s := &session{l: l, p: p, mark: mark}
	s.chk = checker{stats: &l.stats, fail: func(format string, args ...any) {
		s.failf("%s; the last lines sent and read:\n%s", fmt.Sprintf(format, args...), &s.recent)
	}}
	return s, nil
}

func (s *session) failf(format string, args ...any) {
	s.l.run.failf(fmt.Sprintf("%s pid %d", s.l.name, s.p.cmd.Process.Pid), format, args...)
}

// nextID returns a fresh id: mostly a string, sometimes a number, now
// and then none.
func (s *session) nextID() wire.ID {
	s.ids++
	switch n := s.l.rnd.IntN(10); {
	case n < 7:
		return wire.StringID("c" + strconv.Itoa(s.ids))
	case n < 9:
		return wire.NumberID(int64(s.ids))
	}
	return wire.ID{}
}

// line renders a command with id and its other members (pre-encoded).
func line(id wire.ID, typ string, members ...string) string {
	var b strings.Builder
	b.WriteString(`{"type":"` + typ + `"`)
	if !id.IsZero() {
		b.WriteString(`,"id":` + id.String())
	}
	for _, m := range members {
		b.WriteString("," + m)
	}
	b.WriteString("}")
	return b.String()
}

// command returns a random command line and what its answer must be.
func (s *session) command() (string, expect) {
	r := s.l.rnd
	id := s.nextID()
	switch n := r.IntN(100); {
	case n < 30:
		return s.prompt(id)
	case n < 36:
		return line(id, "compact"), expect{id: id, command: "compact"}
	case n < 46:
		return line(id, "get_state"), expect{id: id, command: "get_state"}
	case n < 52:
		return line(id, "get_messages"), expect{id: id, command: "get_messages"}
	case n < 60:
		return line(id, "ping"), expect{id: id, command: "ping"}
	case n < 63:
		return line(id, "get_models"), expect{id: id, command: "get_models"}
	case n < 69:
		return line(id, "clear"), expect{id: id, command: "clear"}
	case n < 74:
		return line(id, "set_model", `"model":"scripted"`), expect{id: id, command: "set_model"}
	case n < 80:
		return line(id, "abort"), expect{id: id, command: "abort"}
	case n < 85:
		return line(id, "abort", `"all":true`), expect{id: id, command: "abort", all: true}
	}
	bad := malformedLines(maxLine)
	m := bad[r.IntN(len(bad))]
	e := expect{command: m.command, bad: true, code: wire.ErrorCode(m.code)}
	if m.id != "" {
		e.id = wire.StringID(strings.Trim(m.id, `"`))
	}
	return m.line, e
}

// prompt returns a prompt line: a few words, now and then a long text.
func (s *session) prompt(id wire.ID) (string, expect) {
	text := fmt.Sprintf("soak prompt %d ✓", s.ids)
	if s.l.rnd.IntN(50) == 0 {
		text += strings.Repeat(" long", 2000+s.l.rnd.IntN(20000))
	}
	s.since++
	return line(id, "prompt", `"message":"`+text+`"`), expect{id: id, command: "prompt"}
}

// send writes lines and records what their answers must be.
func (s *session) send(lines []string, exps []expect) bool {
	for i, e := range exps {
		s.chk.sent(e)
		s.recent.add("> ", []byte(lines[i]))
	}
	if err := s.p.send(lines...); err != nil {
		s.failf("%v", err)
		return false
	}
	return true
}

// take reads and checks one frame. It returns false when stdout has
// ended (and sets s.p.ended), or one of stops fires, or ctx ends.
func (s *session) take(ctx context.Context, stops ...<-chan time.Time) (frameIn, bool) {
	var a, b <-chan time.Time
	switch len(stops) {
	case 2:
		a, b = stops[0], stops[1]
	case 1:
		a = stops[0]
	}
	select {
	case f, ok := <-s.p.frames:
		if !ok {
			s.p.ended = true
			return frameIn{}, false
		}
		s.frames++
		s.recent.add("", f.raw)
		if f.err != nil {
			s.failf("%v: %.300s", f.err, f.raw)
			return f, true
		}
		f.raw = nil
		s.chk.frame(f.resp, f.ev)
		return f, true
	case <-a:
	case <-b:
	case <-ctx.Done():
	}
	return frameIn{}, false
}

// settle reads until every command sent is answered and every prompt and
// compact has ended.
func (s *session) settle(ctx context.Context) bool {
	deadline := time.After(settleTimeout)
	for len(s.chk.pending) > 0 || len(s.chk.work) > 0 {
		if _, ok := s.take(ctx, deadline); !ok {
			if ctx.Err() == nil {
				s.failf("no settling within %v (%s); stderr: %s", settleTimeout, &s.chk, s.p.stderr)
			}
			return false
		}
	}
	return true
}

// burst sends one to maxBurst random commands in one write and settles.
func (s *session) burst(ctx context.Context) bool {
	s.l.stats.Bursts++
	n := 1 + s.l.rnd.IntN(maxBurst)
	lines, exps := make([]string, 0, n), make([]expect, 0, n)
	for range n {
		l, e := s.command()
		lines, exps = append(lines, l), append(exps, e)
	}
	return s.send(lines, exps) && s.settle(ctx)
}

// midTurnAbort sends one to three prompts, waits until the first is
// streaming, running a tool, or a moment has passed, aborts (all of them,
// or the running one), sometimes sends another prompt right behind, and
// settles.
func (s *session) midTurnAbort(ctx context.Context) bool {
	s.l.stats.MidTurnAborts++
	r := s.l.rnd
	var lines []string
	var exps []expect
	for range 1 + r.IntN(3) {
		l, e := s.prompt(s.nextID())
		lines, exps = append(lines, l), append(exps, e)
	}
	if !s.send(lines, exps) || !s.waitMidTurn(ctx) {
		return false
	}
	id := s.nextID()
	all := r.IntN(2) == 0
	lines, exps = nil, nil
	if all {
		lines, exps = append(lines, line(id, "abort", `"all":true`)), append(exps, expect{id: id, command: "abort", all: true})
	} else {
		lines, exps = append(lines, line(id, "abort")), append(exps, expect{id: id, command: "abort"})
	}
	if r.IntN(3) == 0 {
		l, e := s.prompt(s.nextID())
		lines, exps = append(lines, l), append(exps, e)
	}
	return s.send(lines, exps) && s.settle(ctx)
}

// waitMidTurn reads until the running work shows one randomly chosen
// sign of being mid-turn (a text delta, a tool call, a tool's output, the
// end of a step), a random moment up to 400 ms has passed, or the work
// has ended, whichever comes first.
func (s *session) waitMidTurn(ctx context.Context) bool {
	want := []string{"text_delta", "tool_call", "tool_progress", "turn_end"}[s.l.rnd.IntN(4)]
	moment := time.After(time.Duration(s.l.rnd.IntN(400)) * time.Millisecond)
	limit := time.Now().Add(settleTimeout)
	deadline := time.After(settleTimeout)
	for len(s.chk.pending) > 0 || len(s.chk.work) > 0 {
		f, ok := s.take(ctx, moment, deadline)
		switch {
		case ok && f.ev != nil && f.ev.Type() == want:
			return true
		case ok:
		case s.p.ended || ctx.Err() != nil:
			return false
		case time.Now().After(limit):
			s.failf("no frame while waiting for %s (%s)", want, &s.chk)
			return false
		default:
			return true // the moment came
		}
	}
	return true
}

// signalMidTurn sends prompts, signals the process mid-turn, and checks
// that every accepted prompt still ends with its done, that it exits with
// 128 + the signal, and that it leaves no process behind.
func (s *session) signalMidTurn(ctx context.Context, sig syscall.Signal) {
	var lines []string
	var exps []expect
	for range 1 + s.l.rnd.IntN(3) {
		l, e := s.prompt(s.nextID())
		lines, exps = append(lines, l), append(exps, e)
	}
	if !s.send(lines, exps) || !s.waitMidTurn(ctx) {
		s.kill()
		return
	}
	// A signal that comes before zot has answered anything may come
	// before it handles signals at all: then it dies of the signal.
	early := s.frames == 0
	if err := s.p.signal(sig); err != nil {
		s.failf("signalling: %v", err)
	}
	s.l.stats.ExitsSignal++
	// Commands zot had not read when the signal came get no answer;
	// everything it accepted still ends. stdin stays open: the signal
	// alone must end zot.
	s.exit(ctx, 128+int(sig), false, early)
	_ = s.p.stdin.Close()
}

// finish closes stdin, which lets the work finish, and checks that every
// command was answered, every prompt and compact ended, zot exited 0 and
// left nothing behind.
func (s *session) finish(ctx context.Context) {
	s.l.stats.ExitsEOF++
	_ = s.p.stdin.Close()
	s.exit(ctx, 0, true, false)
}

// exit reads the rest of stdout, waits for the process and checks its
// status and that no process carrying its mark remains. With answered,
// every command sent must have been answered; with early, the process may
// also have died of the signal 128 - code (sent before it handled any).
func (s *session) exit(ctx context.Context, code int, answered, early bool) {
	deadline := time.After(exitTimeout)
	for {
		if _, ok := s.take(ctx, deadline); !ok {
			break
		}
	}
	if !s.p.ended {
		s.failf("stdout still open %v after the end began (%s)", exitTimeout, &s.chk)
		s.kill()
		return
	}
	if s.p.endErr != nil {
		s.failf("%v", s.p.endErr)
	}
	if len(s.chk.work) > 0 {
		s.failf("exited with %d accepted prompts or compacts without their done (%s)", len(s.chk.work), &s.chk)
	}
	if answered && len(s.chk.pending) > 0 {
		s.failf("exited with %d commands unanswered", len(s.chk.pending))
	}
	got, sig := s.wait()
	switch {
	case early && sig != 0 && 128+int(sig) == code:
		s.l.stats.EarlySignals++
	case sig != 0:
		s.failf("killed by %v, want exit status %d; stderr: %s", sig, code, s.p.stderr)
	case got != code:
		s.failf("exit status %d, want %d; stderr: %s", got, code, s.p.stderr)
	}
	if n := s.p.stderr.brokenFrames(); n > 0 {
		s.failf("zot reported %d frames that break the schema; stderr: %s", n, s.p.stderr)
	}
	s.noneLeft(-1)
}

// wait reaps the process and returns its exit status, or the signal that
// killed it; it kills the process after exitTimeout.
func (s *session) wait() (code int, sig syscall.Signal) {
	done := make(chan error, 1)
	go func() { done <- s.p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(exitTimeout):
		s.failf("did not exit within %v", exitTimeout)
		_ = s.p.cmd.Process.Kill()
		err = <-done
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		s.failf("wait: %v", err)
		return -1, 0
	}
	if ws, ok := s.p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return s.p.cmd.ProcessState.ExitCode(), 0
}

// kill ends a process that broke down, and everything it started.
func (s *session) kill() {
	_ = s.p.cmd.Process.Kill()
	_ = s.p.stdin.Close()
	if !s.p.ended {
		go func() {
			for range s.p.frames {
			}
		}()
	}
	s.wait()
	s.noneLeft(-1)
}

// noneLeft checks that no process carrying the session's mark but except
// runs, allowing leakGrace for processes being stopped to go.
func (s *session) noneLeft(except int) {
	s.l.stats.LeakChecks++
	start := time.Now()
	for {
		left := marked(s.mark, false, except)
		if len(left) == 0 {
			s.l.stats.MaxLeakWait = max(s.l.stats.MaxLeakWait, time.Since(start))
			return
		}
		if time.Since(start) > leakGrace {
			s.failf("processes left behind: %s", describe(left))
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// idle runs between actions of the long lane, when nothing is pending:
// it checks that no tool process outlived its call, samples descriptors
// and memory, and clears a transcript that has grown, so memory measures
// leaks and not the transcript.
func (s *session) idle(ctx context.Context) {
	pid := s.p.cmd.Process.Pid
	s.noneLeft(pid)
	if s.since > 30 {
		id := s.nextID()
		if !s.send([]string{line(id, "clear")}, []expect{{id: id, command: "clear"}}) || !s.settle(ctx) {
			return
		}
		s.since = 0
	}
	fds, err := fdCount(pid)
	if err != nil {
		s.failf("counting descriptors: %v", err)
		return
	}
	mem, err := rss(pid)
	if err != nil {
		s.failf("reading VmRSS: %v", err)
		return
	}
	r := s.l.run
	r.mu.Lock()
	r.res.Samples = append(r.res.Samples, Sample{At: time.Since(r.begin), RSS: mem, FDs: fds})
	r.mu.Unlock()
}

// Growth compares the long-lived process's memory early and late: the
// median VmRSS of the samples in the window after the warm-up and in the
// last window of the run. It reports ok false when either window has no
// sample.
func Growth(samples []Sample, total, warm, window time.Duration) (first, last int64, ok bool) {
	pick := func(from, to time.Duration) []int64 {
		var v []int64
		for _, s := range samples {
			if s.At >= from && s.At <= to {
				v = append(v, s.RSS)
			}
		}
		return v
	}
	a, b := pick(warm, warm+window), pick(total-window, total)
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, false
	}
	return medianInt(a), medianInt(b), true
}

func medianInt(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
