package exthost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"zot.dev/zot/internal/boundlog"
	"zot.dev/zot/internal/correlate"
	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/internal/subproc"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/extwire"
)

// ProtocolVersion is the extension protocol's version told in hello_ack.
const ProtocolVersion = extwire.ProtocolVersion

// state is where an extension is in its life.
type state int

const (
	starting state = iota // started, no ready yet
	ready                 // attached to the session
	failed                // never got ready: did not start, or failed its handshake
	exited                // its process ended after it was ready
)

func (s state) String() string {
	return [...]string{"starting", "ready", "failed", "exited"}[s]
}

// ext is one extension process.
type ext struct {
	h     *Manager
	spec  Spec
	name  string
	index int

	calls  *correlate.Table[string, extwire.ExtensionFrame]
	logf   *boundlog.File // the extension's log, nil without Config.LogDir
	stderr tail           // the end of its stderr, quoted when it fails to start
	// lines bounds the host's lines about the frames it reads (skipped,
	// dropped), on zot's stderr and in the log; notices bounds the
	// notices it passes on; paced slows the reading of lines it drops.
	lines, notices *boundlog.Limiter
	paced          *boundlog.Bucket

	readyCh   chan struct{} // closed once ready or failed
	readyOnce sync.Once
	startedCh chan struct{} // closed once the start was tried
	done      chan struct{} // closed when the process is reaped and read to its end

	mu       sync.Mutex
	state    state
	failure  error
	proc     *subproc.Process
	out      *outbox
	gotHello bool
	// launch is the one timer of the launch (see launchTimer); helloBy
	// is its deadline before hello, readyBy and quietBy its deadlines
	// after it. promised: hello set sends_ready, so quiet is not ready.
	launch                    *time.Timer
	helloBy, readyBy, quietBy time.Time
	promised                  bool
	stopping                  bool
	commands                  []Command
	tools                     []*extTool
	events                    map[extwire.EventName]bool
	intercepts                map[extwire.InterceptEvent]bool
	subscribed                bool
	overflow                  bool // events were dropped for a full queue (logged once)
	// pending holds the events seen while the extension starts, so that
	// one ready during the first prompt still sees it from turn_start.
	pending []*extwire.EventFrame
}

// maxNotices bounds the notices of one extension passed on in each
// boundlog.Window; the others are dropped and counted in one notice.
const maxNotices = 20

// maxPending bounds the events kept for an extension that is starting.
const maxPending = 256

func newExt(h *Manager, s Spec, index int) *ext {
	e := &ext{
		h:         h,
		spec:      s,
		name:      s.Name(),
		index:     index,
		readyCh:   make(chan struct{}),
		startedCh: make(chan struct{}),
		done:      make(chan struct{}),
		paced:     boundlog.NewBucket(boundlog.DroppedRate, boundlog.DroppedRate),
	}
	e.lines = boundlog.NewLimiter(boundlog.Lines, boundlog.Window, func(n int, w time.Duration) {
		e.report("%d more lines about its output were dropped in %s", n, w)
	})
	e.notices = boundlog.NewLimiter(maxNotices, boundlog.Window, func(n int, w time.Duration) {
		e.h.notify(Notice{Extension: e.name, Kind: NoticeNotify, Level: extwire.NotifyLevelWarn,
			Message: fmt.Sprintf("extension %s sent %d more notices in %s; they were dropped", e.name, n, w)})
	})
	e.calls = correlate.New[string, extwire.ExtensionFrame](correlate.Options[string]{
		OnCancel: func(id string, why error) {
			reason := "aborted"
			if errors.Is(why, correlate.ErrTimeout) || errors.Is(why, context.DeadlineExceeded) {
				reason = "timeout"
			}
			_ = e.send(&extwire.CancelFrame{ID: id, Reason: reason})
		},
	})
	return e
}

// source is the extension's name among the session's tool sources.
func (e *ext) source() string { return "ext:" + e.name }

// logLine appends a note of the host to the extension's log.
func (e *ext) logLine(format string, args ...any) {
	if e.logf == nil {
		return
	}
	fmt.Fprintf(e.logf, "%s [zot] %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// reportFrame reports a problem with a frame the extension wrote, within
// the bound of such lines; one over it is dropped, counted, and slows the
// reading of the extension's output.
func (e *ext) reportFrame(format string, args ...any) {
	if e.lines.Allow() {
		e.report(format, args...)
		return
	}
	e.paced.Pace(1)
}

// report tells a person about a problem: on the host's log and in the
// extension's.
func (e *ext) report(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(e.h.cfg.Log, "zot: extension %s: %s\n", e.name, msg)
	e.logLine("%s", msg)
}

// run starts the extension, reads it until it ends, and cleans up.
func (e *ext) run() {
	defer close(e.done)
	err := e.start()
	close(e.startedCh)
	if err != nil {
		e.fail(fmt.Errorf("starting %s: %w", e.spec.Exec, err))
		e.calls.Close(err)
		e.closeLog()
		return
	}
	e.read()
	e.exited()
	e.closeLog()
}

// start opens the log and starts the process.
func (e *ext) start() error {
	e.mu.Lock()
	stopping := e.stopping
	e.mu.Unlock()
	if stopping {
		return errors.New("stopped before it started")
	}
	if dir := e.h.cfg.LogDir; dir != "" {
		if err := os.MkdirAll(dir, 0o700); err == nil {
			f, err := boundlog.OpenFile(LogFile(dir, e.name), boundlog.FileCap)
			if err == nil {
				e.logf = f
			}
		}
	}
	e.logLine("starting %s %s in %s (manifest %s)", e.spec.Exec, strings.Join(e.spec.Manifest.Args, " "), e.spec.Dir, e.spec.File)
	// Its stdin is a pipe of the host's own, not the process's: the
	// outbox writes small frames to it from the sender's goroutine, and
	// closes it once everything sent is written (see stop).
	inR, inW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("its stdin pipe: %w", err)
	}
	// It runs in its own folder, as zot's extensions always have: a
	// manifest's `"args":["index.js"]` or `go run .` mean the extension's
	// own files. hello_ack tells it the session's directory.
	cmd := subproc.Command{
		Path:       e.spec.Exec,
		Args:       e.spec.Manifest.Args,
		Dir:        e.spec.Dir,
		Env:        environ(),
		Stdin:      inR,
		StdoutPipe: true,
		TermGrace:  e.h.cfg.TermGrace,
	}
	// Through a pipe of zot's, read at a bounded rate: one that floods
	// its stderr waits instead of taking a core, and its log stays
	// within its cap.
	var stderr io.Writer = &e.stderr
	if e.logf != nil {
		stderr = io.MultiWriter(e.logf, &e.stderr)
	}
	cmd.Stderr = boundlog.Paced(stderr, boundlog.StderrRate)
	p, err := subproc.Start(context.Background(), cmd)
	inR.Close() // the child has its copy
	if err != nil {
		inW.Close()
		return err
	}
	out := newOutbox(inW)
	e.mu.Lock()
	e.proc, e.out = p, out
	e.mu.Unlock()
	return nil
}

// environ is the extensions' environment: zot's, less the token of the
// door a client authenticates with.
func environ() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "ZOTCORE_RPC_TOKEN=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (e *ext) closeLog() {
	e.notices.Close()
	e.lines.Close()
	if e.logf != nil {
		e.logf.Close()
	}
}

// read reads frames until the extension's stdout ends. It runs the
// handshake: the first frame must be hello, within the handshake timeout.
func (e *ext) read() {
	e.mu.Lock()
	e.helloBy = time.Now().Add(e.startTimeout())
	launch := time.AfterFunc(e.startTimeout(), e.launchTimer)
	e.launch = launch
	e.mu.Unlock()
	defer launch.Stop()
	lr := ndjson.NewReader(e.proc.Stdout(), e.h.cfg.MaxFrameBytes)
	for {
		line, err := lr.Next()
		if errors.Is(err, ndjson.ErrLineTooLong) {
			e.reportFrame("skipped a frame over %d bytes", e.h.cfg.MaxFrameBytes)
			continue
		}
		if err != nil {
			if !errors.Is(err, os.ErrClosed) && !isEOF(err) {
				e.logLine("reading its output: %v", err)
			}
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f, err := decodeFrame(line)
		if err != nil {
			e.badFrame(line, err)
			continue
		}
		e.mu.Lock()
		hello, st := e.gotHello, e.state
		e.mu.Unlock()
		if st == failed {
			continue // killed: read on to its end
		}
		if !hello {
			hf, ok := f.(*extwire.HelloFrame)
			if !ok {
				e.failAndKill(fmt.Errorf("the first frame must be hello, got %s", f.Type()))
				continue
			}
			if !e.hello(hf) {
				continue
			}
			continue
		}
		if st == starting {
			e.mu.Lock()
			if !e.promised {
				e.quietBy = time.Now().Add(e.h.cfg.ReadyIdle)
			}
			e.mu.Unlock()
		}
		e.handle(f)
	}
}

// launchTimer runs when the extension's one launch timer fires. Before
// hello, the timer is the handshake's deadline: the extension failed.
// After it, the timer fires when the extension was quiet for ReadyIdle or
// at the ReadyTimeout deadline: it is taken as ready with what it has
// registered. One whose hello promised ready (sends_ready) is not taken
// as ready for being quiet: its deadline is its start timeout, counted
// from its start, and at least ReadyTimeout after hello. A frame that
// came meanwhile moves the quiet deadline on: the timer is set again for
// what is left.
func (e *ext) launchTimer() {
	e.mu.Lock()
	hello, st, readyBy, quietBy, launch := e.gotHello, e.state, e.readyBy, e.quietBy, e.launch
	e.mu.Unlock()
	now := time.Now()
	switch {
	case st != starting:
	case !hello:
		e.failAndKill(e.startTimeoutError())
	case !now.Before(readyBy):
		e.markReady(e.readyTimeoutWhy())
	case !now.Before(quietBy):
		e.markReady("it sent no ready and was quiet for " + e.h.cfg.ReadyIdle.String())
	default:
		next := readyBy
		if quietBy.Before(next) {
			next = quietBy
		}
		launch.Reset(next.Sub(now))
	}
}

// startTimeout is how long the extension has from its start to its
// hello: the host's start timeout, or the manifest's start_timeout_ms
// when that is longer.
func (e *ext) startTimeout() time.Duration {
	d := e.h.cfg.StartTimeout
	if ms := e.spec.Manifest.StartTimeoutMs; ms != nil {
		d = max(d, time.Duration(*ms)*time.Millisecond)
	}
	return d
}

// readyTimeoutWhy says why an extension that sent no ready is taken as
// ready at its ready deadline.
func (e *ext) readyTimeoutWhy() string {
	e.mu.Lock()
	promised := e.promised
	e.mu.Unlock()
	if promised {
		return fmt.Sprintf("it promised ready but sent none within its start timeout %s (raise \"start_timeout_ms\" in %s or %s)",
			e.startTimeout(), e.spec.File, e.h.cfg.StartTimeoutName)
	}
	return "no ready within " + e.h.cfg.ReadyTimeout.String()
}

// startTimeoutError says the extension missed its start deadline, and
// which setting gives it more time.
func (e *ext) startTimeoutError() error {
	return fmt.Errorf("no hello within %s; killed (for a slow start, raise \"start_timeout_ms\" in %s or %s)",
		e.startTimeout(), e.spec.File, e.h.cfg.StartTimeoutName)
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// badFrame logs a frame that did not decode. An answer whose id can be
// read fails the request it answers.
func (e *ext) badFrame(line []byte, err error) {
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &probe) == nil {
		if id, ok := probe.ID.(string); ok && e.calls.Reject(id, fmt.Errorf("its answer does not decode: %v", err)) {
			e.reportFrame("answer to request %s does not decode: %v", id, err)
			return
		}
	}
	if t := bytes.TrimSpace(line); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		// Not JSON at all, or not an object: a print or a progress line
		// meant for stderr, most likely.
		e.reportFrame("skipped a line that is not a JSON frame (stdout carries only frames; logs go to stderr): %q", clip(line, 200))
		return
	}
	e.reportFrame("skipped a frame: %v: %s", err, clip(line, 200))
}

// clip shortens line to at most n bytes, cut at a character's start, with
// "…" when it was cut.
func clip(line []byte, n int) string {
	if len(line) <= n {
		return string(line)
	}
	for n > 0 && !utf8.RuneStart(line[n]) {
		n--
	}
	return string(line[:n]) + "…"
}

// hello checks the hello frame and answers it; it reports whether the
// handshake goes on.
func (e *ext) hello(f *extwire.HelloFrame) bool {
	if f.Name != e.name {
		e.failAndKill(fmt.Errorf("hello names %q, the manifest %q", f.Name, e.name))
		return false
	}
	now := time.Now()
	e.mu.Lock()
	e.gotHello = true
	e.readyBy = now.Add(e.h.cfg.ReadyTimeout)
	e.quietBy = now.Add(e.h.cfg.ReadyIdle)
	if f.SendsReady != nil && *f.SendsReady {
		// It promised ready: wait for it through the start timeout,
		// never taking quiet as ready.
		e.promised = true
		if e.helloBy.After(e.readyBy) {
			e.readyBy = e.helloBy
		}
		e.quietBy = e.readyBy
	}
	e.launch.Reset(min(e.readyBy.Sub(now), e.quietBy.Sub(now)))
	e.mu.Unlock()
	e.logLine("hello from %s %s", f.Name, f.Version)
	sess := e.h.sess
	return e.send(&extwire.HelloAckFrame{
		ProtocolVersion: ProtocolVersion,
		ZotVersion:      e.h.cfg.Version,
		Provider:        sess.Provider(),
		Model:           sess.Model(),
		CWD:             sess.CWD(),
		ExtensionDir:    e.spec.Dir,
		DataDir:         e.spec.Dir,
	}) == nil
}

// handle acts on one frame after hello.
func (e *ext) handle(f extwire.ExtensionFrame) {
	switch f := f.(type) {
	case *extwire.HelloFrame:
		if e.lines.Allow() {
			e.logLine("ignored a second hello")
		}
	case *extwire.RegisterCommandFrame:
		e.mu.Lock()
		c := Command{Name: f.Name, Description: f.Description, Extension: e.name}
		e.commands = replaceOrAppend(e.commands, c, func(x Command) bool { return x.Name == f.Name })
		isReady := e.state == ready
		e.mu.Unlock()
		if isReady {
			e.checkCommands()
		}
	case *extwire.RegisterToolFrame:
		t := newExtTool(e, f)
		e.mu.Lock()
		e.tools = replaceOrAppend(e.tools, t, func(x *extTool) bool { return x.name == f.Name })
		isReady := e.state == ready
		e.mu.Unlock()
		if isReady {
			e.publishTools()
		}
	case *extwire.SubscribeFrame:
		events := map[extwire.EventName]bool{}
		for _, ev := range f.Events {
			events[ev] = true
		}
		intercepts := map[extwire.InterceptEvent]bool{}
		for _, ev := range f.Intercept {
			switch ev {
			case extwire.InterceptEventToolCall, extwire.InterceptEventTurnStart, extwire.InterceptEventAssistantMessage:
				intercepts[ev] = true
			default:
				e.reportFrame("cannot intercept %q; only tool_call, turn_start and assistant_message", ev)
			}
		}
		e.mu.Lock()
		e.events, e.intercepts, e.subscribed = events, intercepts, true
		e.mu.Unlock()
	case *extwire.ReadyFrame:
		e.markReady("")
	case *extwire.ToolResultFrame:
		e.answer(f.ID, f)
	case *extwire.EventInterceptResponseFrame:
		e.answer(f.ID, f)
	case *extwire.CommandResponseFrame:
		e.answer(f.ID, f)
	case *extwire.PanelRenderFrame:
		e.h.trackPanel(f.PanelID, e)
		e.h.notify(Notice{Extension: e.name, Kind: NoticePanelRender, Panel: extwire.Panel{ID: f.PanelID, Title: f.Title, Lines: f.Lines, Footer: f.Footer}})
	case *extwire.PanelCloseFrame:
		e.h.untrackPanel(f.PanelID, e)
		e.h.notify(Notice{Extension: e.name, Kind: NoticePanelClose, Panel: extwire.Panel{ID: f.PanelID}})
	case *extwire.NotifyFrame:
		if !e.notices.Allow() {
			e.paced.Pace(1)
			return
		}
		e.h.notify(Notice{Extension: e.name, Kind: NoticeNotify, Level: f.Level, Message: f.Message})
	case *extwire.ShutdownAckFrame:
		e.logLine("shutdown acknowledged")
	}
}

func replaceOrAppend[T any](list []T, v T, same func(T) bool) []T {
	for i, x := range list {
		if same(x) {
			list[i] = v
			return list
		}
	}
	return append(list, v)
}

// answer resolves the request id with f.
func (e *ext) answer(id string, f extwire.ExtensionFrame) {
	if !e.calls.Resolve(id, f) && e.lines.Allow() {
		e.logLine("dropped a %s for request %q: unknown, answered already or given up", f.Type(), id)
	}
}

// markReady attaches the extension to the session: its tools join the
// tool set, and session_start reaches it. why, when set, says why it is
// taken as ready without its ready frame.
func (e *ext) markReady(why string) {
	e.mu.Lock()
	if e.state != starting || !e.gotHello {
		e.mu.Unlock()
		return
	}
	e.state = ready
	// session_start, then what happened while it started, in order, and
	// before any later event (event holds the lock to send).
	if e.events[extwire.EventNameSessionStart] {
		_ = e.out.send(&extwire.EventFrame{Event: extwire.EventNameSessionStart})
	}
	for _, f := range e.pending {
		if e.events[f.Event] {
			_ = e.out.send(f)
		}
	}
	e.pending = nil
	e.mu.Unlock()
	if why != "" {
		e.logLine("taken as ready: %s", why)
	} else {
		e.logLine("ready")
	}
	e.publishTools()
	e.checkCommands()
	e.readyOnce.Do(func() { close(e.readyCh) })
}

// publishTools puts the extension's tools in the session's tool set.
func (e *ext) publishTools() {
	e.mu.Lock()
	list := make([]tools.Tool, 0, len(e.tools))
	for _, t := range e.tools {
		list = append(list, t)
	}
	running := e.state == ready
	e.mu.Unlock()
	if running {
		e.h.sess.Tools().Set(e.source(), list)
	}
}

// checkCommands logs the commands left out between this extension and
// the other ready ones: of two with one name, the extension loaded first
// keeps it, whichever was ready first.
func (e *ext) checkCommands() {
	mine := e.commandList()
	for _, o := range e.h.current() {
		if o == e {
			continue
		}
		theirs := map[string]bool{}
		for _, c := range o.commandList() {
			theirs[c.Name] = true
		}
		first, later := e, o
		if o.index < e.index {
			first, later = o, e
		}
		for _, c := range mine {
			if theirs[c.Name] {
				later.reportFrame("command /%s is left out: extension %s, loaded before it, offers one of that name", c.Name, first.name)
			}
		}
	}
}

// commandList returns the extension's commands while it is ready.
func (e *ext) commandList() []Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != ready {
		return nil
	}
	return append([]Command(nil), e.commands...)
}

// fail marks the extension as never ready, for err, and reports it.
func (e *ext) fail(err error) {
	e.mu.Lock()
	if e.state != starting {
		e.mu.Unlock()
		return
	}
	e.state, e.failure = failed, err
	e.pending = nil
	stopping := e.stopping
	e.mu.Unlock()
	if !stopping {
		e.reportStartFailure(err)
	}
	e.readyOnce.Do(func() { close(e.readyCh) })
}

// tailLines is how many of the last lines of its stderr are quoted when
// an extension fails to start.
const tailLines = 20

// reportStartFailure tells a person that the extension did not start, and
// why: on the host's log, with the likely cause and the last lines of its
// stderr, in its own log, and to the client as an error notice.
func (e *ext) reportStartFailure(err error) {
	msg := fmt.Sprintf("not loaded: %v", err)
	if cause := LikelyCause(e.spec); cause != "" {
		msg += "; likely cause: " + cause
	}
	e.logLine("%s", msg)
	full := "extension " + e.name + ": " + msg
	if lines := e.stderr.lines(tailLines); len(lines) > 0 {
		full += "\nlast lines of its log:\n  " + strings.Join(lines, "\n  ")
	}
	fmt.Fprintf(e.h.cfg.Log, "zot: %s\n", full)
	e.h.notify(Notice{Extension: e.name, Kind: NoticeNotify, Level: extwire.NotifyLevelError, Message: full, Logged: true})
}

// failAndKill fails the handshake and kills the process group.
func (e *ext) failAndKill(err error) {
	e.fail(err)
	e.mu.Lock()
	p := e.proc
	e.mu.Unlock()
	if p != nil {
		_ = p.Kill()
	}
}

// exited cleans up once the extension's output has ended: its pending
// requests fail at once, its tools leave the session, and, unless it was
// being stopped, the crash is reported.
func (e *ext) exited() {
	e.mu.Lock()
	p, out := e.proc, e.out
	e.mu.Unlock()
	status := "closed its output"
	// The process is reaped soon after its output ends, unless something
	// it started holds that open.
	reaped := time.NewTimer(time.Second)
	select {
	case <-p.Done():
		status = exitStatus(p)
	case <-reaped.C:
	}
	reaped.Stop()
	cause := fmt.Errorf("extension %s %s", e.name, status)
	e.calls.Close(cause)
	e.mu.Lock()
	wasReady, wasStarting := e.state == ready, e.state == starting
	if wasReady {
		e.state, e.failure = exited, cause
	}
	stopping := e.stopping
	e.mu.Unlock()
	if wasStarting {
		// It ended before it was ready: a failed start, reported by fail.
		e.fail(cause)
	}
	e.readyOnce.Do(func() { close(e.readyCh) })
	e.h.forgetPanels(e)
	if wasReady {
		e.h.sess.Tools().Set(e.source(), nil)
	}
	if stopping {
		e.logLine("stopped: %s", status)
		if esc := p.Escalation(); esc != subproc.NotSignalled {
			e.logLine("shutdown: it had to be %s", esc)
		}
		return
	}
	if wasReady {
		e.report("%s; its tools and commands are gone until extensions are reloaded", status)
		e.h.notify(Notice{Extension: e.name, Kind: NoticeNotify, Level: extwire.NotifyLevelError,
			Message: fmt.Sprintf("extension %s %s; its tools and commands are gone until extensions are reloaded", e.name, status), Logged: true})
	}
	// Its input is closed, and whatever it left running in its group goes
	// too (SIGTERM, then SIGKILL).
	out.closeNow()
	ctx, cancel := context.WithTimeout(context.Background(), e.h.cfg.ShutdownGrace+e.h.cfg.TermGrace)
	defer cancel()
	_, _ = p.Stop(ctx)
}

// exitStatus describes how the process ended.
func exitStatus(p *subproc.Process) string {
	st := p.ProcessState()
	switch {
	case st == nil:
		return "ended"
	case st.Exited():
		return fmt.Sprintf("exited with status %d", st.ExitCode())
	}
	return "was killed (" + st.String() + ")"
}

// send writes one frame to the extension; it never blocks.
func (e *ext) send(f extwire.HostFrame) error {
	e.mu.Lock()
	out := e.out
	e.mu.Unlock()
	if out == nil {
		return errors.New("not running")
	}
	return out.send(f)
}

// sendIfRoom is send for a frame the user's input makes (a panel key):
// when the extension has not read its last outboxHighWater frames, f is
// refused with ErrNotReading instead of waiting in zot's memory.
func (e *ext) sendIfRoom(f extwire.HostFrame) error {
	e.mu.Lock()
	out := e.out
	e.mu.Unlock()
	if out == nil {
		return errors.New("not running")
	}
	if out.full() {
		return fmt.Errorf("extension %s: %w", e.name, ErrNotReading)
	}
	return out.send(f)
}

// request sends the frame build makes with a fresh id and waits for its
// answer, at most timeout (0: until ctx ends). Giving up sends cancel.
func (e *ext) request(ctx context.Context, timeout time.Duration, build func(id string) extwire.HostFrame) (extwire.ExtensionFrame, error) {
	return e.calls.Call(ctx, timeout, func(id string) error { return e.send(build(id)) })
}

// event sends a lifecycle event if the extension subscribed to it; while
// it starts, the event is kept for it. It never blocks: when the
// extension has not read its last thousand frames, the event is dropped
// (and that is logged once).
func (e *ext) event(f *extwire.EventFrame) {
	e.mu.Lock()
	switch {
	case e.state == starting:
		if len(e.pending) < maxPending {
			e.pending = append(e.pending, f)
		}
		e.mu.Unlock()
		return
	case e.state != ready || !e.events[f.Event]:
		e.mu.Unlock()
		return
	}
	if e.out.hasRoom() {
		_ = e.out.send(f)
		e.mu.Unlock()
		return
	}
	first := !e.overflow
	e.overflow = true
	e.mu.Unlock()
	if first {
		e.report("it does not read its input: events are dropped until it does")
	}
}

// stop ends the extension by the ladder: shutdown, and its stdin closed
// once that is written; up to ShutdownGrace for it to exit; SIGTERM to
// its process group, up to TermGrace; SIGKILL. Each wait ends as soon as
// the process is gone. stop returns once it is reaped and read to its
// end. When ctx ends, what is left is killed at once.
func (e *ext) stop(ctx context.Context) {
	e.mu.Lock()
	e.stopping = true
	e.mu.Unlock()
	<-e.startedCh
	e.mu.Lock()
	p, out := e.proc, e.out
	e.mu.Unlock()
	if p == nil {
		<-e.done
		return
	}
	_ = out.send(&extwire.ShutdownFrame{})
	grace := time.NewTimer(e.h.cfg.ShutdownGrace)
	defer grace.Stop()
	// The outbox writes what waits, shutdown last, then closes stdin; an
	// extension that does not read has its stdin cut once the grace is
	// over.
	closeCtx, cutInput := context.WithCancel(ctx)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		out.close(closeCtx)
	}()
	select {
	case <-p.Done():
	case <-grace.C:
	case <-ctx.Done():
	}
	cutInput()
	<-closed
	// Without a stdin pipe of its own, Stop begins at SIGTERM, and only
	// if something of the process group is left.
	_, _ = p.Stop(ctx) // exited logs how far it went
	<-e.done
}

// info describes the extension.
func (e *ext) info() Info {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := Info{
		Name:        e.name,
		Version:     e.spec.Manifest.Version,
		Description: e.spec.Manifest.Description,
		Origin:      e.spec.Origin,
		Dir:         e.spec.Dir,
		State:       e.state.String(),
	}
	if e.failure != nil {
		i.Error = e.failure.Error()
	}
	for _, t := range e.tools {
		i.Tools = append(i.Tools, t.name)
	}
	for _, c := range e.commands {
		i.Commands = append(i.Commands, c.Name)
	}
	return i
}
