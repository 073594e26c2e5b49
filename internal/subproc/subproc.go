// Package subproc runs the child processes of zot: the shell of the bash
// tool, `zot rpc` under the Go client, extensions and MCP stdio servers.
// It gives each the same life cycle:
//
//   - The child leads a process group of its own, so that it and everything
//     it starts can be signalled together ([Process.Kill],
//     [Process.GroupAlive]).
//   - On Linux the child is killed when zot dies (PR_SET_PDEATHSIG), unless
//     [Command.KeepOnParentDeath] is set.
//   - [Process.Stop] ends it by a ladder: close its stdin, wait, SIGTERM the
//     group, wait, SIGKILL the group.
//   - One goroutine per process reaps it; [Process.Done] is closed once it
//     has been reaped and its output delivered, so nothing outlives it.
//
// A typical use, for a child that speaks over its stdin and stdout:
//
//	p, err := subproc.Start(ctx, subproc.Command{
//		Path:       "zot-ext",
//		StdinPipe:  true,
//		StdoutPipe: true,
//		Stderr:     log,
//	})
//	if err != nil {
//		return err
//	}
//	defer p.Stop(context.Background())
//	// write requests to p.Stdin(), read answers from p.Stdout()
//
// Where process groups do not exist (non-unix systems) the package still
// builds: signals reach only the child itself, and SIGTERM becomes a kill.
package subproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the durations of a [Command] left zero.
const (
	// DefaultStdinGrace is how long Stop waits for the child to exit after
	// closing its stdin.
	DefaultStdinGrace = 5 * time.Second
	// DefaultTermGrace is how long Stop waits after SIGTERM before SIGKILL.
	DefaultTermGrace = 2 * time.Second
	// DefaultWaitDelay is how long the child's output may stay open after
	// it has exited (a grandchild holding it) before zot stops reading.
	DefaultWaitDelay = 1 * time.Second
)

// groupPoll is how often Stop looks whether the group has emptied once the
// child itself has exited: no notification exists for that.
const groupPoll = 20 * time.Millisecond

// Command says what to run and how. The zero values of its fields are
// usable defaults.
type Command struct {
	// Path is the executable. A name without a path separator is looked up
	// in PATH; a relative path is relative to Dir.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory; "" means zot's.
	Dir string
	// Env is the environment, as in exec.Cmd: nil inherits zot's.
	Env []string

	// Stdin, when set, is the child's standard input, as in exec.Cmd.
	Stdin io.Reader
	// StdinPipe gives the child a pipe as its standard input, written
	// through [Process.Stdin]; Stop closes it as its first step. Stdin must
	// then be nil. Without either the child reads the null device.
	StdinPipe bool
	// Stdout, when set, receives the child's standard output, as in
	// exec.Cmd.
	Stdout io.Writer
	// StdoutPipe makes the child's standard output readable through
	// [Process.Stdout]. Stdout must then be nil. Without either the output
	// is discarded.
	StdoutPipe bool
	// Stderr receives the child's standard error (typically a log); nil
	// discards it. It may be the same writer as Stdout.
	Stderr io.Writer

	// WaitDelay bounds how long, after the child has exited, zot keeps
	// copying its output to Stdout and Stderr and keeps the stdout pipe
	// open for reading: a grandchild that inherited them may hold them
	// open indefinitely. Past it the output is cut off and [Process.Wait]
	// reports exec.ErrWaitDelay (if the child had exited with status 0).
	// 0 means DefaultWaitDelay.
	WaitDelay time.Duration
	// StdinGrace is how long Stop waits for the child to exit after
	// closing its stdin; 0 means DefaultStdinGrace. Without a stdin pipe
	// Stop skips that step.
	StdinGrace time.Duration
	// TermGrace is how long Stop waits for the group to exit after SIGTERM
	// before it sends SIGKILL; 0 means DefaultTermGrace.
	TermGrace time.Duration

	// KeepOnParentDeath lets the child outlive zot. By default, on Linux,
	// the kernel kills the child (SIGKILL) when zot dies, however it dies.
	// Only the child itself is covered: what it starts is not.
	KeepOnParentDeath bool

	// Confine, when set, is called on the OS thread that is about to fork
	// the child, before the fork: restrictions it puts on the thread
	// (Landlock rules, a seccomp filter: internal/sandbox) hold for the
	// child and all it starts. That thread runs nothing else and ends
	// once the child is reaped. An error fails the start.
	Confine func() error
}

// Escalation is how far zot had to go to end a process: the strongest
// signal it sent to the process's group before the process was reaped.
type Escalation int32

const (
	// NotSignalled means the process exited on its own, or once its stdin
	// was closed.
	NotSignalled Escalation = iota
	// Terminated means the process was sent SIGTERM (where there are no
	// signals, this does not occur: Stop kills instead).
	Terminated
	// Killed means the process was sent SIGKILL.
	Killed
)

// String returns "not signalled", "terminated" or "killed".
func (e Escalation) String() string {
	switch e {
	case NotSignalled:
		return "not signalled"
	case Terminated:
		return "terminated"
	case Killed:
		return "killed"
	}
	return fmt.Sprintf("Escalation(%d)", int32(e))
}

// Process is a started child process. Its methods are safe for concurrent
// use.
type Process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser // nil unless Command.StdinPipe
	stdout *stdoutPipe    // nil unless Command.StdoutPipe

	stdinGrace time.Duration
	termGrace  time.Duration
	waitDelay  time.Duration

	sent     atomic.Int32 // strongest Escalation sent so far
	stopping atomic.Bool  // a Stop runs the ladder

	// exited is closed when cmd.Wait has returned (the child is reaped and
	// its output copied or cut off); waitErr and escalation are set before.
	exited     chan struct{}
	waitErr    error
	escalation Escalation
	// done is closed after exited, once the stdout pipe has been read to
	// its end or cut off; it is the reaper goroutine's last act.
	done chan struct{}
}

// Start starts c. ctx bounds only the start: the process lives until it
// exits, is stopped or killed.
//
// Starting is synchronous: fork and exec take milliseconds, and a missing
// or non-executable file is reported, naming it, before any fork. Waiting
// for the child to become ready (a handshake line, say) is the caller's, on
// its own deadline; a caller whose check fails calls Stop or Kill.
func Start(ctx context.Context, c Command) (*Process, error) {
	if c.Path == "" {
		return nil, errors.New("starting a process: no executable given")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting %q: %w", c.Path, err)
	}
	if c.StdinPipe && c.Stdin != nil {
		return nil, fmt.Errorf("starting %q: both Stdin and StdinPipe are set", c.Path)
	}
	if c.StdoutPipe && c.Stdout != nil {
		return nil, fmt.Errorf("starting %q: both Stdout and StdoutPipe are set", c.Path)
	}
	if err := checkExecutable(c.Path, c.Dir); err != nil {
		return nil, err
	}
	p := &Process{
		stdinGrace: orDefault(c.StdinGrace, DefaultStdinGrace),
		termGrace:  orDefault(c.TermGrace, DefaultTermGrace),
		waitDelay:  orDefault(c.WaitDelay, DefaultWaitDelay),
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	cmd.Stdout = c.Stdout
	cmd.Stderr = c.Stderr
	if !sameWriter(c.Stderr, c.Stdout) {
		cmd.Stderr = smallReads(c.Stderr)
	}
	cmd.WaitDelay = p.waitDelay
	var lock bool
	cmd.SysProcAttr, lock = sysProcAttr(!c.KeepOnParentDeath)
	p.cmd = cmd

	// An os.Pipe of our own rather than cmd.StdoutPipe: that one is closed
	// by cmd.Wait, which the reaper calls at once, before the caller may
	// have read everything; ours stays open until the caller has read it
	// to its end or WaitDelay has passed.
	var outW *os.File
	if c.StdoutPipe {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("starting %q: stdout pipe: %w", c.Path, err)
		}
		p.stdout = &stdoutPipe{f: r, eof: make(chan struct{})}
		cmd.Stdout = w
		outW = w
	}
	if c.StdinPipe {
		w, err := cmd.StdinPipe()
		if err != nil {
			if outW != nil {
				outW.Close()
				p.stdout.f.Close()
			}
			return nil, fmt.Errorf("starting %q: stdin pipe: %w", c.Path, err)
		}
		p.stdin = w
	}

	started := make(chan error, 1)
	go p.reap(lock, c.Confine, started)
	err := <-started
	if outW != nil {
		outW.Close() // the child has its copy
	}
	if err != nil {
		// cmd.Start has closed the stdin pipe.
		if p.stdout != nil {
			p.stdout.f.Close()
		}
		return nil, fmt.Errorf("starting %q: %w", c.Path, err)
	}
	p.pid = cmd.Process.Pid
	return p, nil
}

// reap starts the command, reports the outcome on started and, if it
// started, waits for it and for its output.
//
// With lock, the goroutine stays locked to its OS thread from before the
// start until the child has been reaped. PR_SET_PDEATHSIG fires when the
// thread that forked the child exits, not only when the process does, and
// the Go runtime ends a thread whenever a goroutine locked to it exits: an
// unlocked start could fork from a thread that another goroutine later
// takes, locks and ends, killing the child under a live zot. Locked, no
// other goroutine runs on the thread while the child lives. This costs one
// OS thread, asleep in the wait for the child, per running child; a thread
// of the pool would be blocked in that wait anyway.
//
// With confine, the goroutine is locked too, confine restricts the thread
// before the start, and the thread is never unlocked: it ends with the
// goroutine, so no other goroutine ever runs restricted.
func (p *Process) reap(lock bool, confine func() error, started chan<- error) {
	if lock || confine != nil {
		runtime.LockOSThread()
	}
	var err error
	if confine != nil {
		if err = confine(); err != nil {
			err = fmt.Errorf("confining: %w", err)
		}
	}
	if err == nil {
		err = p.cmd.Start()
	}
	started <- err
	if err != nil {
		if lock && confine == nil {
			runtime.UnlockOSThread()
		}
		return
	}
	p.waitErr = p.cmd.Wait()
	if lock && confine == nil {
		runtime.UnlockOSThread()
	}
	p.escalation = Escalation(p.sent.Load())
	close(p.exited)
	if p.stdout != nil {
		t := time.NewTimer(p.waitDelay)
		select {
		case <-p.stdout.eof:
		case <-t.C:
		}
		t.Stop()
		// Unblocks a reader still waiting on a pipe a grandchild holds.
		p.stdout.f.Close()
	}
	close(p.done)
}

// Pid returns the child's process id, which on unix is also the id of the
// process group it leads.
func (p *Process) Pid() int { return p.pid }

// Stdin returns the write end of the child's stdin pipe, or nil without
// Command.StdinPipe. Closing it tells the child no more input comes; Stop
// closes it too. Writes fail once the child has exited.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout returns the read end of the child's stdout pipe, or nil without
// Command.StdoutPipe. Read it to its end: the Process closes it once that
// end is reached after the child's exit, or WaitDelay after the exit,
// whichever comes first; a Read then fails with an error matching
// os.ErrClosed.
func (p *Process) Stdout() io.ReadCloser {
	if p.stdout == nil {
		return nil
	}
	return p.stdout
}

// Done returns a channel closed once the child has been reaped and its
// output delivered or cut off (see Command.WaitDelay and Stdout).
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for Done and returns how the child ended, as exec.Cmd.Wait:
// nil for exit status 0, an *exec.ExitError otherwise, or
// exec.ErrWaitDelay when the output had to be cut off.
func (p *Process) Wait() error {
	<-p.done
	return p.waitErr
}

// ProcessState returns the child's state once it has been reaped, else nil.
func (p *Process) ProcessState() *os.ProcessState {
	select {
	case <-p.exited:
		return p.cmd.ProcessState
	default:
		return nil
	}
}

// ExitCode returns the child's exit code once it has been reaped, or -1
// while it runs or when a signal ended it.
func (p *Process) ExitCode() int {
	if st := p.ProcessState(); st != nil {
		return st.ExitCode()
	}
	return -1
}

// Escalation returns how far zot went to end the child: the strongest
// signal sent to its group before it was reaped. While the child runs it
// returns what was sent so far.
func (p *Process) Escalation() Escalation {
	select {
	case <-p.exited:
		return p.escalation
	default:
		return Escalation(p.sent.Load())
	}
}

// record notes that e was sent.
func (p *Process) record(e Escalation) {
	for {
		old := p.sent.Load()
		if old >= int32(e) || p.sent.CompareAndSwap(old, int32(e)) {
			return
		}
	}
}

// hasExited reports whether the child has been reaped.
func (p *Process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stdoutPipe is the read end of the child's stdout; it notes when reading
// has ended, so the reaper need not wait for it any longer.
type stdoutPipe struct {
	f    *os.File
	once sync.Once
	eof  chan struct{} // closed when a Read fails (EOF included) or on Close
}

func (s *stdoutPipe) Read(b []byte) (int, error) {
	n, err := s.f.Read(b)
	if err != nil {
		s.ended()
	}
	return n, err
}

func (s *stdoutPipe) Close() error {
	s.ended()
	return s.f.Close()
}

func (s *stdoutPipe) ended() { s.once.Do(func() { close(s.eof) }) }

// checkExecutable reports, naming path, why it cannot be run: not found,
// not a regular executable file.
func checkExecutable(path, dir string) error {
	name := path
	if dir != "" && !filepath.IsAbs(path) && strings.ContainsRune(path, filepath.Separator) {
		name = filepath.Join(dir, path)
	}
	_, err := exec.LookPath(name)
	if err == nil {
		return nil
	}
	// Drop the wrappers that repeat the name.
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("starting %q: %w", path, err)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// copyBufSize is what a child's stderr is read in: a size the runtime
// already allocates for (bufio's default), so it adds no size class.
const copyBufSize = 4 << 10

// smallReads returns w, or when os/exec would copy the child's output
// to it through io.Copy (w is neither a file nor an io.ReaderFrom), w
// with a ReadFrom of its own that reads copyBufSize at a time. io.Copy
// takes 32 KiB for each child and keeps it for as long as the child
// lives; what a child writes on stderr is a log of a few lines.
func smallReads(w io.Writer) io.Writer {
	switch w.(type) {
	case nil, *os.File, io.ReaderFrom:
		return w
	}
	return &smallCopy{w}
}

// smallCopy is a writer whose ReadFrom copies through a small buffer.
type smallCopy struct{ io.Writer }

// ReadFrom copies r to the writer until r ends.
func (c *smallCopy) ReadFrom(r io.Reader) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{c.Writer}, r, make([]byte, copyBufSize))
}

// sameWriter reports whether a and b are one writer (os/exec then
// copies both outputs through one pipe); values that cannot be compared
// are not.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}
