package rpcclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"zot.dev/zot/internal/subproc"
	"zot.dev/zot/sdk/wire"
)

// DefaultCloseTimeout is how long Close waits for zot to exit after
// closing its stdin, when Options.CloseTimeout is zero.
const DefaultCloseTimeout = 5 * time.Second

// termGrace is how long Close waits after SIGTERM before killing zot, and
// how long the reader may drain stdout after the process has exited.
const termGrace = 2 * time.Second

// Options says how to start `zot rpc`.
type Options struct {
	// Bin is the zot binary; "" means $ZOT_BIN when set, else "zot"
	// looked up in PATH (as the Python and Node clients find it). When
	// none is found Start fails with ErrNotFound.
	Bin string
	// Args are the flags after `rpc`, e.g. {"--provider", "scripted"}.
	Args []string
	// Env is the process's environment, as in exec.Cmd: nil inherits this
	// process's. Set ZOTCORE_RPC_TOKEN here to require Hello.
	Env []string
	// Dir is the process's working directory; "" means the current one.
	Dir string
	// Stderr receives zot's log (never protocol frames); nil discards it.
	// Either way the client keeps its last lines: when zot exits before
	// answering, the error ends with them (zot's reason for a failed
	// start, such as a missing API key, is written there).
	Stderr io.Writer
	// CloseTimeout is how long Close waits for zot to finish its work and
	// exit before signalling it; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// OnBadLine, when set, is called with each stdout line that is not a
	// JSON object (a server fault), from the reading goroutine: it must not
	// block. Such lines are otherwise skipped.
	OnBadLine func(line []byte, err error)
	// OnEvent, when set, is called with each event no Stream takes: what
	// extensions push (ext_notify, panel_render, panel_close, and the
	// ext_display, ext_insert and panel_open of a run_command), from the
	// reading goroutine: it must not block. Such events are otherwise
	// dropped.
	OnEvent func(ev wire.Event)
	// OnPermissionRequest, when set, answers each permission_request
	// event (zot asks them only when started with --approve, e.g. Args
	// {"--approve"}): it is called on a goroutine of its own with the
	// event, and what it returns is sent as the answer_permission. ctx
	// ends when the Client is closed; the function must then return, as
	// Close waits for it. The event also reaches its Stream as usual.
	// Without it, answer with AnswerPermission.
	OnPermissionRequest func(ctx context.Context, req *wire.PermissionRequestEvent) PermissionAnswer
	// EventBuffer is the capacity of the channel Prompt, Compact and
	// RunCommand return; 0 means 256. (Events wait in the client without
	// bound before that channel, so a consumer that stops reading never
	// holds up zot or the client's other commands.)
	EventBuffer int
}

// PermissionAnswer is the answer to a permission_request: a Decision and,
// for wire.PermissionDecisionReject, a Reason shown to the model. With
// wire.PermissionDecisionAllowAlways, Save ("project" or "everywhere")
// also keeps the request's Rule (or this Rule) as a permission rule in
// zot's config.json for later sessions (docs/settings.md).
type PermissionAnswer struct {
	Decision wire.PermissionDecision
	Reason   string
	Save     string
	Rule     string
}

// Client is a running `zot rpc` process. Its methods are safe for
// concurrent use.
type Client struct {
	opts   Options
	proc   *subproc.Process
	stderr *stderrTail // zot's stderr, passed on, its end kept
	stdin  io.WriteCloser
	out    io.Reader // zot's stdout

	wturn   chan struct{}  // a token while a command line is written: one at a time
	writers sync.WaitGroup // the writes of command lines (see write)

	mu      sync.Mutex
	nextID  int64
	pending map[wire.ID]chan *wire.Response
	streams map[wire.ID]*Stream
	idle    chan struct{} // closed when streams empties; nil while it is empty
	gone    error         // set once no command can be answered: ErrClosed or an ErrExited
	closed  bool          // Close has begun: no new forwarder starts

	wg         sync.WaitGroup // the reader
	readerDone chan struct{}

	forwarders sync.WaitGroup // the goroutines feeding event channels (events.go)
	closing    chan struct{}  // closed when Close begins

	answering     sync.WaitGroup     // the OnPermissionRequest calls and the registered tools' (tools.go)
	answerCtx     context.Context    // theirs; ends at Close
	stopAnswering context.CancelFunc // ends answerCtx

	tools clientTools // the Go functions registered as tools (tools.go)

	closeOnce sync.Once
	closeErr  error
}

// findZot returns the binary to run: bin, else $ZOT_BIN, else zot on
// PATH.
func findZot(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	if env := os.Getenv("ZOT_BIN"); env != "" {
		return env, nil
	}
	if p, err := exec.LookPath("zot"); err == nil {
		return p, nil
	}
	return "", ErrNotFound
}

// Start starts `Bin rpc Args...`. ctx bounds only the start: the process
// lives until Close (or until it exits by itself). zot runs in a process
// group of its own, so a terminal's Ctrl-C reaches this program and not
// zot, and on Linux it is killed should this program die without Close.
func Start(ctx context.Context, opts Options) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting zot rpc: %w", err)
	}
	bin, err := findZot(opts.Bin)
	if err != nil {
		return nil, err
	}
	stderr := &stderrTail{to: opts.Stderr}
	proc, err := subproc.Start(ctx, subproc.Command{
		Path:       bin,
		Args:       append([]string{"rpc"}, opts.Args...),
		Env:        opts.Env,
		Dir:        opts.Dir,
		StdinPipe:  true,
		StdoutPipe: true,
		Stderr:     stderr,
		// Bounds the wait for stdout and stderr that a leftover
		// grandchild keeps open.
		WaitDelay:  termGrace,
		StdinGrace: closeTimeout(opts),
		TermGrace:  termGrace,
	})
	if err != nil {
		return nil, fmt.Errorf("zot rpc: %w", err)
	}
	c := &Client{
		opts:       opts,
		proc:       proc,
		stderr:     stderr,
		stdin:      proc.Stdin(),
		out:        proc.Stdout(),
		pending:    make(map[wire.ID]chan *wire.Response),
		streams:    make(map[wire.ID]*Stream),
		readerDone: make(chan struct{}),
		closing:    make(chan struct{}),
		wturn:      make(chan struct{}, 1),
	}
	c.answerCtx, c.stopAnswering = context.WithCancel(context.Background())
	c.wg.Go(c.read)
	return c, nil
}

// closeTimeout is Options.CloseTimeout or its default.
func closeTimeout(opts Options) time.Duration {
	if opts.CloseTimeout <= 0 {
		return DefaultCloseTimeout
	}
	return opts.CloseTimeout
}

// read decodes stdout line by line until it ends, then fails whatever is
// still waiting for an answer.
func (c *Client) read() {
	defer close(c.readerDone)
	br := bufio.NewReaderSize(c.out, 64<<10)
	var readErr error
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
	}
	// The process has closed stdout: it is exiting. Wait for its status
	// so the error says how it ended. (Should a leftover grandchild hold
	// stdout open, the read ends with os.ErrClosed once zot has exited.)
	why := fmt.Errorf("%w (%v)", ErrExited, exitStatus(c.proc.Wait()))
	if reason := c.stderr.reason(); reason != "" {
		why = fmt.Errorf("%w: %s", why, reason)
	}
	if readErr != nil && !errors.Is(readErr, os.ErrClosed) {
		why = fmt.Errorf("%w; reading its output: %v", why, readErr)
	}
	c.shutdown(why)
}

// exitStatus describes how the process ended.
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// shutdown marks the client gone with why (unless Close already did) and
// fails every waiting command and unfinished stream.
func (c *Client) shutdown(why error) {
	c.mu.Lock()
	if c.gone == nil {
		c.gone = why
	}
	pending, streams := c.pending, c.streams
	c.pending, c.streams = map[wire.ID]chan *wire.Response{}, map[wire.ID]*Stream{}
	c.idleLocked()
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	for _, s := range streams {
		s.fail(fmt.Errorf("%s: %w before done", s.Command, why))
	}
}

// dispatch routes one stdout line: a response to its waiting command, an
// event to its stream.
func (c *Client) dispatch(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return
	}
	resp, ev, err := wire.DecodeFrame(line)
	if err != nil {
		ev = c.undecoded(line, err)
		if ev == nil {
			return
		}
	}
	if resp != nil {
		c.mu.Lock()
		ch := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp // buffered, and the only send
		}
		return
	}
	id := ev.GetPromptID()
	c.mu.Lock()
	s := c.streams[id]
	if s != nil && ev.Type() == wire.TypeDoneEvent {
		c.dropStreamLocked(id)
	}
	c.mu.Unlock()
	if s != nil {
		s.push(ev)
	} else if c.opts.OnEvent != nil {
		c.opts.OnEvent(ev)
	}
	if pr, ok := ev.(*wire.PermissionRequestEvent); ok && c.opts.OnPermissionRequest != nil {
		c.answering.Go(func() { c.answerRequest(pr) })
	}
	switch ev.Type() {
	case wire.TypeClientToolCallEvent, wire.TypeToolResultEvent:
		c.toolEvent(ev)
	}
}

// answerRequest asks OnPermissionRequest about pr and sends its answer. A
// request that no longer waits (it timed out, or its work was aborted)
// refuses the answer; that is no fault of the client's.
func (c *Client) answerRequest(pr *wire.PermissionRequestEvent) {
	ans := c.opts.OnPermissionRequest(c.answerCtx, pr)
	if c.answerCtx.Err() != nil {
		return
	}
	_ = c.Answer(c.answerCtx, pr.RequestID, ans)
}

// undecoded keeps an event line that did not decode as a *wire.UnknownEvent,
// or reports a line that is not an event at all.
func (c *Client) undecoded(line []byte, err error) wire.Event {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &head) == nil && head.Type != "" && head.Type != wire.TypeResponse {
		if ev := wire.NewUnknownEvent(head.Type, line, err); ev != nil {
			return ev
		}
	}
	if c.opts.OnBadLine != nil {
		c.opts.OnBadLine(append([]byte(nil), line...), err)
	}
	return nil
}

// send writes cmd with a fresh id and waits for its response. When stream
// is not nil it is registered under the id before the line is written, so
// none of its events can be missed. A failed response is returned as an
// *Error.
func (c *Client) send(ctx context.Context, cmd wire.Command, stream *Stream) (*wire.Response, error) {
	ch := make(chan *wire.Response, 1)
	c.mu.Lock()
	if c.gone != nil {
		err := c.gone
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", cmd.Type(), err)
	}
	c.nextID++
	id := wire.NumberID(c.nextID)
	cmd.SetID(id)
	c.pending[id] = ch
	c.writers.Add(1) // before Close can wait for the writes: c.gone is nil
	if stream != nil {
		stream.ID = id
		c.streams[id] = stream
		if c.idle == nil {
			c.idle = make(chan struct{})
		}
	}
	c.mu.Unlock()

	if err := c.write(ctx, cmd); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("sending %s: %w", cmd.Type(), err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.gone
			c.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", cmd.Type(), err)
		}
		if !resp.Success {
			c.forget(id)
			return resp, errorOf(resp, cmd.Type())
		}
		return resp, nil
	case <-ctx.Done():
		// The command was sent and may still take effect; its answer
		// and events are dropped.
		c.forget(id)
		return nil, fmt.Errorf("%s: %w", cmd.Type(), ctx.Err())
	}
}

// forget drops the waiter and the stream of id.
func (c *Client) forget(id wire.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.dropStreamLocked(id)
	c.mu.Unlock()
}

// dropStreamLocked removes the stream of id; the caller holds c.mu.
func (c *Client) dropStreamLocked(id wire.ID) {
	delete(c.streams, id)
	if len(c.streams) == 0 {
		c.idleLocked()
	}
}

// idleLocked tells Wait that no stream is left; the caller holds c.mu.
func (c *Client) idleLocked() {
	if c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// write puts one command line on zot's stdin, one line at a time; the
// caller has counted it in c.writers. When ctx ends before zot takes the
// line (it stopped reading its input), write returns ctx's error and
// leaves the line to a goroutine of its own, which writes it whole once
// zot reads again, or fails once Close closes zot's stdin; Close waits
// for it.
func (c *Client) write(ctx context.Context, cmd wire.Command) error {
	b := cmd.AppendJSON(make([]byte, 0, 128))
	b = append(b, '\n')
	select {
	case c.wturn <- struct{}{}:
	case <-ctx.Done():
		c.writers.Done()
		return ctx.Err()
	}
	if ctx.Done() == nil { // nothing to give up for: write here
		_, err := c.stdin.Write(b)
		<-c.wturn
		c.writers.Done()
		return err
	}
	done := make(chan error, 1)
	go func() {
		defer c.writers.Done()
		_, err := c.stdin.Write(b)
		<-c.wturn
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends zot: it closes zot's stdin (zot then finishes its running and
// queued work and exits), waits up to Options.CloseTimeout, then sends
// SIGTERM, and after a grace period kills it. It returns once the process
// has been reaped and every goroutine of the Client has ended: nil when
// zot exited with status 0, else how it ended. Commands sent after Close
// fail with ErrClosed. Calling Close again returns the same result.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		if c.gone == nil {
			c.gone = ErrClosed
		}
		c.closed = true
		c.mu.Unlock()
		close(c.closing)
		// Closing stdin, Stop's first step, also unblocks a write in
		// progress.
		esc, waitErr := c.proc.Stop(context.Background())
		c.wg.Wait()
		c.writers.Wait()
		c.forwarders.Wait()
		c.stopAnswering()
		c.answering.Wait()
		within := "did not exit within " + closeTimeout(c.opts).String()
		switch {
		case esc == subproc.Terminated:
			c.closeErr = fmt.Errorf("closing zot rpc: %s; sent SIGTERM (%v)", within, exitStatus(waitErr))
		case esc == subproc.Killed:
			c.closeErr = fmt.Errorf("closing zot rpc: %s; killed (%v)", within, exitStatus(waitErr))
		case waitErr != nil:
			c.closeErr = fmt.Errorf("closing zot rpc: %w", waitErr)
		}
	})
	return c.closeErr
}

// Done returns a channel closed once the process has exited and its output
// has been read (after Close, or when zot ended by itself).
func (c *Client) Done() <-chan struct{} { return c.readerDone }
