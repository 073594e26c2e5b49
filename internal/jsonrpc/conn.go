package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"zot.dev/zot/internal/correlate"
	"zot.dev/zot/internal/ndjson"
)

// Defaults of Options, and of NDJSON's line limit.
const (
	DefaultMaxLineBytes = ndjson.DefaultMaxLine
	DefaultQueueFrames  = 1024
	DefaultQueueBytes   = 16 << 20
	DefaultStallTimeout = 10 * time.Second
	DefaultMaxInFlight  = 1024
)

// Options configures a Conn. The zero value is ready to use. The
// longest incoming message is the transport's to bound (NDJSON's
// maxLine).
type Options struct {
	// QueueFrames and QueueBytes bound the outgoing queue; a sender waits
	// while it is full. 0 means DefaultQueueFrames, DefaultQueueBytes. One
	// frame is always let into an empty queue, whatever its size.
	QueueFrames int
	QueueBytes  int
	// StallTimeout is how long the queue may stay full while the client
	// reads nothing (no byte, as far as zot can see) before it is
	// disconnected (ErrStalled). 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// Log receives diagnostics, one line each; nil discards them.
	Log io.Writer
	// MaxInFlight bounds the Async jobs of one connection at once: a
	// request that arrives while that many run is answered with
	// CodeTooManyRequests (kind too_many_requests, retryable) without
	// reaching the Handler. Notifications always reach it. 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// ShutdownGrace bounds how long Serve, when it stops, lets each
	// connection finish the requests under way and write their answers
	// before closing it (see Conn.Shutdown). 0 means 5 s.
	ShutdownGrace time.Duration
	// Check, when set, is called with each outgoing frame (without its
	// LF) as it is queued, with the queue locked; a failure is logged and
	// the frame sent anyway: a debugging aid, e.g. schema validation. It
	// must not keep the slice.
	Check func(frame []byte) error
	// Tap, when set, is asked once for each connection NewConn makes,
	// given its peer, for the function that sees the connection's
	// traffic: the transport is wrapped with [Tap] and ended is called
	// once the connection has ended and its goroutines returned. A nil
	// see taps nothing; without Tap a connection costs nothing more.
	Tap func(peer Peer) (see func(Traffic), ended func())
}

func (o Options) withDefaults() Options {
	if o.QueueFrames <= 0 {
		o.QueueFrames = DefaultQueueFrames
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 5 * time.Second
	}
	return o
}

// Peer says who is at the other end of a connection.
type Peer struct {
	// Transport is "unix", "stdio", or another transport's name.
	Transport string
	// UID and PID are the peer process's, -1 when unknown.
	UID, PID int
	// Label names the peer in logs, e.g. "unix:pid=123,uid=1000".
	Label string
	// Principal is who the peer authenticated as on a network listener
	// (a token's name); "" for the daemon's own user on a Unix socket
	// or stdio, whose uid is UID.
	Principal string
	// Admin is set for a principal that may see and act on every
	// principal's sessions.
	Admin bool
}

// Handler serves the incoming messages of one connection.
//
// Handle is called on the connection's reader goroutine, one message at
// a time, in the order the messages arrived: a notification is seen only
// after every message before it was handled. It must not block for long
// (a blocked Handle stalls the reading of its own connection, no other):
// it does the quick, ordered part of the work and returns the answer
// ([Result], [Fail]) or an [Async] job, which the Conn runs on a
// goroutine of its own, concurrently with other requests. For a
// notification the result is dropped and an error only logged.
//
// Handle may set req.Params to nil once it has decoded them, so that the
// text of a long request is not kept while its Async job runs.
//
// Handle must not call Conn.Call: the client's answer is read by the
// goroutine Handle runs on, so the call could only end with the
// connection. Calls to the client belong in Async jobs.
//
// ctx ends when the connection ends (and, for an Async job, when the
// client cancels the request with $/cancel_request: its cause is then
// ErrRequestCancelled). Work that must outlive the connection uses
// context.WithoutCancel.
type Handler interface {
	Handle(ctx context.Context, c *Conn, req *Request) Reply
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, c *Conn, req *Request) Reply

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, c *Conn, req *Request) Reply { return f(ctx, c, req) }

// NewHandler makes the Handler of a new connection; the Conn is not yet
// reading when it is called.
type NewHandler func(c *Conn) Handler

// Static returns a NewHandler that gives every connection h.
func Static(h Handler) NewHandler { return func(*Conn) Handler { return h } }

// Closer is implemented by Handlers that want to know when their
// connection ended: OnClose is called once, after the reader has ended
// and every Async job of the connection has returned, with the cause
// (nil when the client closed the connection).
type Closer interface {
	OnClose(cause error)
}

// Reply is what a Handler returns: an answer now, or a job that answers
// later.
type Reply struct {
	result any
	err    error
	run    func(ctx context.Context) (any, error)
	then   func() // see Reply.Then
}

// Result answers with v, encoded with encoding/json (a json.RawMessage
// as is; nil as null).
func Result(v any) Reply { return Reply{result: v} }

// Fail answers with err: an *Error (found with errors.As) as it is, any
// other error as CodeInternal.
func Fail(err error) Reply {
	if err == nil {
		err = errors.New("failed without a reason")
	}
	return Reply{err: err}
}

// Async answers with what run returns, run on a goroutine the Conn owns
// and waits for. Frames the job sends before it returns (Conn.Notify)
// are written before its answer.
func Async(run func(ctx context.Context) (any, error)) Reply { return Reply{run: run} }

// ErrRequestCancelled is the cause (context.Cause) of an Async job's
// context ended by the client's $/cancel_request, as opposed to the
// connection's end (ErrClosed and the like): a handler tells "the client
// cancelled this request" from "the client is gone" with errors.Is.
var ErrRequestCancelled = errors.New("cancelled by the client ($/cancel_request)")

// answer is the payload of the client's answer to one of our calls.
type answer struct {
	result json.RawMessage
	err    *Error
}

// Conn is one client connection. Its methods are safe for concurrent use.
type Conn struct {
	t        Transport
	tapEnded func() // Options.Tap's ended, or nil
	peer     Peer
	opts     Options
	handler  Handler
	out      *outbox
	calls    *correlate.Table[string, answer]

	ctx    context.Context
	cancel context.CancelCauseFunc
	jobs   sync.WaitGroup
	active atomic.Int64 // Async jobs running or answering
	// slots counts the Async jobs that hold one of MaxInFlight's places:
	// a request's place is given back before its answer is queued, so a
	// client that has read the answer finds the place free.
	slots atomic.Int64

	mu       sync.Mutex
	inflight map[string]context.CancelCauseFunc // requests being served, by id

	done chan struct{}
	err  error // set before done is closed
}

// NewConn serves t: it calls nh for the connection's Handler and starts
// reading. The Conn owns t and closes it when it ends.
func NewConn(t Transport, peer Peer, nh NewHandler, opts Options) *Conn {
	opts = opts.withDefaults()
	if peer.Label == "" {
		peer.Label = peer.Transport
	}
	c := &Conn{
		t:        t,
		peer:     peer,
		opts:     opts,
		inflight: make(map[string]context.CancelCauseFunc),
		done:     make(chan struct{}),
	}
	if opts.Tap != nil {
		if see, ended := opts.Tap(peer); see != nil {
			c.t, c.tapEnded = Tap(t, see), ended
		}
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.calls = correlate.New[string, answer](correlate.Options[string]{
		ID: func(n uint64) string { return "zot-" + strconv.FormatUint(n, 10) },
		OnCancel: func(id string, _ error) {
			// Tell the client to stop asking its user; it may answer
			// anyway (the answer is then dropped as late).
			_ = c.Notify(c.ctx, "$/cancel_request", map[string]string{"requestId": id})
		},
	})
	c.out = newOutbox(c.t, opts, c.abort, c.logf)
	c.handler = nh(c)
	go c.run()
	return c
}

// Peer returns who is at the other end.
func (c *Conn) Peer() Peer { return c.peer }

// Done returns a channel closed when the connection has ended and every
// goroutine of it has returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended once Done is closed: nil when the
// client closed it, ErrClosed after Close, ErrStalled for a client that
// stopped reading, or the read or write error.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Wait waits until the connection has ended and returns Err.
func (c *Conn) Wait() error {
	<-c.done
	return c.err
}

// Close ends the connection: the contexts of its jobs end, the stream is
// closed, calls to the client fail with ErrClosed. It does not wait (see
// Wait) and may be called more than once.
func (c *Conn) Close() error {
	c.abort(ErrClosed)
	return nil
}

// Shutdown ends the connection gently: it reads no more input (as at
// the end of the client's input: calls to the client fail), lets the
// requests under way finish, writes their answers and closes. When ctx
// ends first it closes at once, as Close does. It returns Wait's error.
// A transport that cannot stop only its reading (no CloseRead method) is
// closed at once.
func (c *Conn) Shutdown(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok {
		c.Hurry(time.Until(dl))
	}
	if cr, ok := c.t.(halfCloser); !ok || cr.CloseRead() != nil {
		_ = c.Close()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		_ = c.Close()
		<-c.done
	}
	return c.err
}

// Hurry shortens the time the client may make no progress reading
// (StallTimeout) to d: for a shutdown, so that a client that reads
// nothing holds it up no longer than d from the call, while one that
// reads, however slowly, still gets its last answers. It never
// lengthens it.
func (c *Conn) Hurry(d time.Duration) { c.out.hurry(d) }

// abort ends the connection with cause (the first cause is kept).
func (c *Conn) abort(cause error) {
	c.cancel(cause)
	_ = c.t.Close() // unblocks the reader and a stuck write
}

// Notify sends a notification. params is encoded at once, with
// encoding/json; nil sends no params member. It waits while the outgoing
// queue is full, until ctx ends.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = marshal(params); err != nil {
			return fmt.Errorf("notification %s: %w", method, err)
		}
	}
	if err := c.out.send(ctx, requestFrame(nil, method, raw)); err != nil {
		return fmt.Errorf("notification %s: %w", method, err)
	}
	return nil
}

// Call sends a request to the client and waits for its answer, whose
// result it returns raw. An error answer is returned as *Error. When ctx
// ends first, the client is sent $/cancel_request and ctx's error is
// returned; when the connection ends (however it ends), an error
// matching ErrClosed, and ErrNotSent too when the request was never
// queued for the client.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = marshal(params); err != nil {
			return nil, fmt.Errorf("call %s: %w", method, err)
		}
	}
	queued := false
	ans, err := c.calls.Call(ctx, 0, func(id string) error {
		idRaw, _ := json.Marshal(id) // a string always encodes
		err := c.out.send(ctx, requestFrame(idRaw, method, raw))
		queued = err == nil
		return err
	})
	if err != nil {
		if !queued {
			err = fmt.Errorf("%w: %w", ErrNotSent, err)
		}
		if c.ctx.Err() != nil && !errors.Is(err, ErrClosed) {
			// The connection ended (a reset, a failed write): whatever
			// the cause, the caller learns that the client is gone.
			return nil, fmt.Errorf("call %s: %w (%w)", method, ErrClosed, err)
		}
		return nil, fmt.Errorf("call %s: %w", method, err)
	}
	if ans.err != nil {
		return nil, ans.err
	}
	return ans.result, nil
}

func (c *Conn) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, "jsonrpc: %s: %s\n", c.peer.Label, fmt.Sprintf(format, args...))
}

// run owns the connection: it reads until the end, then waits for the
// jobs, lets the writer drain, closes the stream and reports.
func (c *Conn) run() {
	cause := c.read()
	if cause != nil {
		c.cancel(cause)
		c.calls.Close(cause)
	} else {
		// The client closed its side: nothing it could still answer
		// will come, but the jobs under way finish and their answers
		// are written while the client still listens.
		c.calls.Close(fmt.Errorf("%w: the client closed its input", ErrClosed))
	}
	c.jobs.Wait()
	c.out.close()
	c.out.waitDone("at the end")
	_ = c.t.Close()
	<-c.out.done
	if cause == nil {
		cause = c.out.Err()
	}
	c.cancel(ErrClosed)
	if cl, ok := c.handler.(Closer); ok {
		cl.OnClose(cause)
	}
	c.err = cause
	if c.tapEnded != nil {
		c.tapEnded()
	}
	close(c.done)
}

// read reads and dispatches messages until the end of input (nil) or
// an error (the cause).
func (c *Conn) read() error {
	for {
		msg, err := c.t.Read(c.ctx)
		if c.ctx.Err() != nil {
			return context.Cause(c.ctx)
		}
		if err != nil {
			var tooLong *TooLongError
			switch {
			case errors.As(err, &tooLong):
				e := NewError(CodeInvalidRequest, KindLineTooLong, "the line is longer than %d bytes; it was skipped", tooLong.Limit)
				c.send(errorFrame(nullID, e.With("limit", tooLong.Limit)))
				continue
			case errors.Is(err, io.EOF):
				return nil
			}
			return fmt.Errorf("reading from the client: %w", err)
		}
		if len(bytes.TrimSpace(msg)) == 0 {
			continue
		}
		c.dispatch(msg)
	}
}

// send queues a frame for the client for as long as the connection
// lives; a failure means the connection is ending, which the reader
// sees.
func (c *Conn) send(frame []byte) {
	if err := c.out.send(c.ctx, frame); err != nil {
		c.logf("dropping a frame: %v", err)
	}
}

func (c *Conn) dispatch(msg []byte) {
	p := parse(msg)
	switch {
	case p.fail != nil && p.quiet:
		c.logf("ignoring a notification: %v", p.fail)
	case p.fail != nil:
		c.send(errorFrame(p.id, p.fail))
	case p.resp != nil:
		c.resolve(p.resp)
	case p.req != nil:
		c.handle(p.req)
	}
}

// resolve hands the client's answer to the call waiting for it.
func (c *Conn) resolve(r *response) {
	var id string
	if json.Unmarshal(r.id, &id) != nil {
		c.logf("dropping an answer to id %s: no call of ours has it", r.id)
		return
	}
	if !c.calls.Resolve(id, answer{result: r.result, err: r.err}) {
		c.logf("dropping an answer to id %s: unknown, or its call stopped waiting", r.id)
	}
}

func (c *Conn) handle(req *Request) {
	if req.Method == "$/cancel_request" {
		c.cancelRequest(req)
		return
	}
	if req.IsNotification() {
		reply := c.call(c.ctx, req)
		if reply.run == nil {
			if reply.err != nil {
				c.logf("notification %s failed: %v", req.Method, reply.err)
			}
			return
		}
		c.startJob()
		go func() {
			defer c.endJob()
			defer c.slots.Add(-1)
			if _, err := c.runJob(c.ctx, req, reply.run); err != nil {
				c.logf("notification %s failed: %v", req.Method, err)
			}
		}()
		return
	}
	key := string(req.ID)
	c.mu.Lock()
	_, dup := c.inflight[key]
	c.mu.Unlock()
	if dup {
		c.send(errorFrame(req.ID, invalidRequest("id", "%s is already in use by a request being served", req.ID)))
		return
	}
	if n := c.slots.Load(); n >= int64(c.opts.MaxInFlight) {
		e := NewError(CodeTooManyRequests, KindTooManyRequests, "%d requests of this connection are under way; send %s again once some are answered", n, req.Method)
		c.send(errorFrame(req.ID, e.WithRetryable(true).With("limit", c.opts.MaxInFlight)))
		return
	}
	ctx, cancel := context.WithCancelCause(c.ctx)
	reply := c.call(ctx, req)
	if reply.run == nil {
		cancel(nil)
		c.answer(ctx, req, reply.result, reply.err)
		if reply.then != nil {
			reply.then()
		}
		return
	}
	c.mu.Lock()
	c.inflight[key] = cancel
	c.mu.Unlock()
	c.startJob()
	go func() {
		defer c.endJob()
		res, err := c.runJob(ctx, req, reply.run)
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		c.slots.Add(-1) // before the answer: see slots
		c.answer(ctx, req, res, err)
		cancel(nil)
		if reply.then != nil {
			reply.then()
		}
	}()
}

func (c *Conn) startJob() {
	c.slots.Add(1)
	c.active.Add(1)
	c.jobs.Add(1)
}

func (c *Conn) endJob() {
	c.active.Add(-1)
	c.jobs.Done()
}

// Drain waits until no request is being served and every frame queued
// is written, or the connection ends, or ctx ends (its error is
// returned). It reads on meanwhile: a request that arrives keeps it
// waiting. A stream that cannot stop only its reading (stdin) is drained
// this way before the process exits.
func (c *Conn) Drain(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for c.active.Load() > 0 || !c.out.flushed() {
		select {
		case <-c.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("draining the connection: %w", ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// cancelRequest serves $/cancel_request: the context of the request it
// names ends. Unknown or finished ids are ignored, as the protocol asks.
func (c *Conn) cancelRequest(req *Request) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || !validID(p.RequestID) {
		if !req.IsNotification() {
			c.send(errorFrame(req.ID, InvalidParams("requestId", "must be the id of a request, a string or a number")))
		}
		return
	}
	c.mu.Lock()
	cancel := c.inflight[string(compact(p.RequestID))]
	c.mu.Unlock()
	if cancel != nil {
		cancel(ErrRequestCancelled)
	}
	if !req.IsNotification() {
		c.send(resultFrame(req.ID, json.RawMessage("null")))
	}
}

// call runs Handle, turning a panic into an internal error.
func (c *Conn) call(ctx context.Context, req *Request) (r Reply) {
	defer func() {
		if v := recover(); v != nil {
			c.logf("panic serving %s: %v\n%s", req.Method, v, debug.Stack())
			r = Fail(NewError(CodeInternal, KindInternal, "zot failed serving %s: %v", req.Method, v))
		}
	}()
	return c.handler.Handle(ctx, c, req)
}

// runJob runs an Async job, turning a panic into an internal error.
func (c *Conn) runJob(ctx context.Context, req *Request, run func(context.Context) (any, error)) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.logf("panic serving %s: %v\n%s", req.Method, v, debug.Stack())
			res, err = nil, NewError(CodeInternal, KindInternal, "zot failed serving %s: %v", req.Method, v)
		}
	}()
	return run(ctx)
}

// answer sends the answer to req.
func (c *Conn) answer(ctx context.Context, req *Request, res any, err error) {
	if err == nil {
		raw, merr := marshal(res)
		if merr == nil {
			c.send(resultFrame(req.ID, raw))
			return
		}
		c.logf("answering %s: %v", req.Method, merr)
		err = merr
	}
	c.send(errorFrame(req.ID, wireErr(ctx, err)))
}

// wireErr is the error object for a handler's error.
func wireErr(ctx context.Context, err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(context.Cause(ctx), ErrRequestCancelled) && (errors.Is(err, context.Canceled) || errors.Is(err, ErrRequestCancelled)):
		return NewError(CodeCancelled, KindCancelled, "the request was cancelled")
	}
	return Internal(err)
}
