// Package correlate matches the answers of a peer to the requests sent to
// it, for JSON protocols in which a request carries an id and its answer
// carries the same id back (the extension host's NDJSON, JSON-RPC 2.0).
//
// A [Table] hands out ids from a counter and keeps one entry per call
// until the answer arrives ([Table.Resolve]), the caller stops waiting
// (its context ends or its deadline passes), or the table is closed with
// the cause that ends every call at once ([Table.Close]: the reader
// ended, the process crashed). The caller writes the request itself;
// the table spawns no goroutine.
//
//	calls := correlate.New[string, json.RawMessage](correlate.Options[string]{
//		OnCancel: func(id string, why error) { out.Send(cancelFrame(id)) },
//	})
//	// A caller:
//	res, err := calls.Call(ctx, 30*time.Second, func(id string) error {
//		out.Send(request(id, "tool.run", params))
//		return nil
//	})
//	// The reader, for each answer, and when it ends:
//	if !calls.Resolve(ans.ID, ans.Result) { log("unknown or late answer", ans.ID) }
//	calls.Close(fmt.Errorf("extension exited: %w", err))
package correlate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// ErrTimeout is the cause of a call that got no answer within its
// deadline.
var ErrTimeout = errors.New("no answer in time")

// ErrForgotten is the outcome of a call dropped by Pending.Forget(nil).
var ErrForgotten = errors.New("call forgotten")

// ErrClosed is the cause of every call failed by Close(nil).
var ErrClosed = errors.New("calls closed")

// Options configures a [Table]. The zero value is ready to use for
// string and integer ids.
type Options[K comparable] struct {
	// ID makes the id of the n-th call, counting from 1. When nil, ids
	// are "1", "2", ... for a string K and 1, 2, ... for int, int64 and
	// uint64; New panics for any other K.
	ID func(n uint64) K
	// OnCancel, when set, is called when a caller stops waiting for an
	// answer because its context ended or its deadline passed, with the
	// call's id and why (ctx's error or ErrTimeout), so the peer can be
	// told to stop working on it (a cancel frame, JSON-RPC's
	// $/cancelRequest). The call has left the table by then: its answer,
	// if it comes, is reported by Resolve as unknown. OnCancel runs on
	// the goroutine that was waiting, after its entry was removed and
	// with no lock held. It is not called for calls failed by Close or
	// dropped by Pending.Forget: the peer is gone, or never saw the
	// request.
	OnCancel func(id K, why error)
}

// Table tracks the calls sent to one peer until their answers arrive. K
// is the id type and P the answer's payload. Its methods are safe for
// concurrent use.
type Table[K comparable, P any] struct {
	newID    func(n uint64) K
	onCancel func(id K, why error)

	mu      sync.Mutex
	n       uint64 // ids handed out so far
	pending map[K]*Pending[K, P]
	cause   error // set by Close: every call fails with it
}

// New returns an empty Table.
func New[K comparable, P any](opts Options[K]) *Table[K, P] {
	newID := opts.ID
	if newID == nil {
		newID = counterID[K]()
	}
	return &Table[K, P]{newID: newID, onCancel: opts.OnCancel, pending: make(map[K]*Pending[K, P])}
}

// counterID returns the default id maker for K, and panics when K has
// none.
func counterID[K comparable]() func(uint64) K {
	var f any
	switch any(*new(K)).(type) {
	case string:
		f = func(n uint64) string { return strconv.FormatUint(n, 10) }
	case int:
		f = func(n uint64) int { return int(n) }
	case int64:
		f = func(n uint64) int64 { return int64(n) }
	case uint64:
		f = func(n uint64) uint64 { return n }
	}
	g, ok := f.(func(uint64) K)
	if !ok {
		panic(fmt.Sprintf("correlate: Options.ID is required for ids of type %T", *new(K)))
	}
	return g
}

// Pending is one call waiting for its answer.
type Pending[K comparable, P any] struct {
	t  *Table[K, P]
	id K
	// done is closed once answer and err are set, by whoever removed
	// the call from the table.
	done   chan struct{}
	answer P
	err    error
}

// Start registers a new call and returns it; the caller then sends the
// request with p.ID() and calls p.Wait, or p.Forget if the request could
// not be sent. A call stays in the table until it is answered, its Wait
// gives up, it is forgotten or the table is closed. Start fails with the
// table's cause once the table is closed.
func (t *Table[K, P]) Start() (*Pending[K, P], error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cause != nil {
		return nil, fmt.Errorf("starting a call: %w", t.cause)
	}
	t.n++
	p := &Pending[K, P]{t: t, id: t.newID(t.n), done: make(chan struct{})}
	if _, dup := t.pending[p.id]; dup {
		// Options.ID repeated an id still in use: a caller's bug that
		// would hand one answer to two calls.
		return nil, fmt.Errorf("starting a call: id %v is already waiting for its answer", p.id)
	}
	t.pending[p.id] = p
	return p, nil
}

// Call registers a call, calls send with its id to write the request,
// and waits for the answer as [Pending.Wait] does. If send fails the
// call is forgotten and its error returned. If ctx has already ended,
// nothing is sent.
func (t *Table[K, P]) Call(ctx context.Context, timeout time.Duration, send func(id K) error) (P, error) {
	var zero P
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("starting a call: %w", err)
	}
	p, err := t.Start()
	if err != nil {
		return zero, err
	}
	if err := send(p.id); err != nil {
		err = fmt.Errorf("sending call %v: %w", p.id, err)
		p.Forget(err)
		return zero, err
	}
	return p.Wait(ctx, timeout)
}

// Resolve delivers answer to the call id. It reports false, and drops
// the answer, when no call is waiting under id: an unknown id, one
// already answered, or one whose caller stopped waiting (a late answer).
func (t *Table[K, P]) Resolve(id K, answer P) bool {
	p := t.take(id)
	if p == nil {
		return false
	}
	p.finish(answer, nil)
	return true
}

// Reject fails the call id with err, e.g. when its answer arrived but
// could not be decoded; Wait returns err wrapped with the id. It reports
// false when no call is waiting under id.
func (t *Table[K, P]) Reject(id K, err error) bool {
	p := t.take(id)
	if p == nil {
		return false
	}
	var zero P
	p.finish(zero, fmt.Errorf("call %v: %w", id, err))
	return true
}

// Close fails every waiting call with cause and makes every later Start
// and Call fail with it at once; a nil cause means ErrClosed. Only the
// first Close's cause is kept; later calls do nothing.
func (t *Table[K, P]) Close(cause error) {
	if cause == nil {
		cause = ErrClosed
	}
	t.mu.Lock()
	if t.cause != nil {
		t.mu.Unlock()
		return
	}
	t.cause = cause
	pending := t.pending
	t.pending = nil
	t.mu.Unlock()
	var zero P
	for id, p := range pending {
		p.finish(zero, fmt.Errorf("call %v: %w", id, cause))
	}
}

// Err returns the cause the table was closed with, or nil while it is
// open.
func (t *Table[K, P]) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cause
}

// Len returns the number of calls waiting for their answer.
func (t *Table[K, P]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// take removes the call id from the table and returns it, or nil when it
// is not there. Whoever takes a call finishes it.
func (t *Table[K, P]) take(id K) *Pending[K, P] {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pending[id]
	if p != nil {
		delete(t.pending, id)
	}
	return p
}

// ID returns the call's id, to put in the request.
func (p *Pending[K, P]) ID() K { return p.id }

// Done returns a channel that is closed once the call has an outcome:
// its answer, or an error.
func (p *Pending[K, P]) Done() <-chan struct{} { return p.done }

// Wait waits for the call's answer, for at most timeout (none when
// timeout <= 0) and until ctx ends. On a deadline or ctx's end the call
// leaves the table (a late answer is dropped, Resolve reports false),
// Options.OnCancel is called and the error matches ErrTimeout or ctx's
// error. An answer that arrives together with the deadline wins. After
// the call has ended, Wait returns its outcome again.
func (p *Pending[K, P]) Wait(ctx context.Context, timeout time.Duration) (P, error) {
	select {
	case <-p.done:
		return p.answer, p.err
	default:
	}
	var expired <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	var why, err error
	select {
	case <-p.done:
		return p.answer, p.err
	case <-expired:
		why = ErrTimeout
		err = fmt.Errorf("call %v: %w (waited %v)", p.id, why, timeout)
	case <-ctx.Done():
		why = ctx.Err()
		err = fmt.Errorf("call %v: %w", p.id, why)
	}
	if !p.abandon(err) {
		// Answered or failed meanwhile: that outcome stands.
		<-p.done
		return p.answer, p.err
	}
	if p.t.onCancel != nil {
		p.t.onCancel(p.id, why)
	}
	return p.answer, p.err
}

// Forget removes the call from the table without telling the peer, e.g.
// because its request could not be sent; a Wait returns err (nil means
// ErrForgotten). It does nothing when the call has already ended.
func (p *Pending[K, P]) Forget(err error) {
	if err == nil {
		err = fmt.Errorf("call %v: %w", p.id, ErrForgotten)
	}
	p.abandon(err)
}

// abandon ends the call with err if it is still in the table, and
// reports whether it was.
func (p *Pending[K, P]) abandon(err error) bool {
	t := p.t
	t.mu.Lock()
	mine := t.pending[p.id] == p
	if mine {
		delete(t.pending, p.id)
	}
	t.mu.Unlock()
	if mine {
		var zero P
		p.finish(zero, err)
	}
	return mine
}

// finish sets the call's outcome. Only the one who removed the call
// from the table calls it, once.
func (p *Pending[K, P]) finish(answer P, err error) {
	p.answer, p.err = answer, err
	close(p.done)
}
