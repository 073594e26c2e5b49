package engine

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"zot.dev/zot/sdk/wire"
)

// Policy says what the work does when a subscription's reader has fallen
// behind and its buffer is full.
type Policy int

const (
	// Block makes the work wait for room before each of its events,
	// outside every lock of the session and only while the work is not
	// aborted: a reader that takes events slowly slows the agent down,
	// and an abort is never held up by it.
	Block Policy = iota
	// Disconnect makes the work wait as Block does, but no longer than
	// the stall timeout: a reader that took nothing for that long is
	// disconnected. Its waiting values are dropped, every later one is
	// too, Next returns ErrStalled, and a session (Session.Subscribe)
	// forgets it at once.
	Disconnect
)

// DefaultSubscriptionBuffer is a subscription's bound when its options
// give none.
const DefaultSubscriptionBuffer = 256

// DefaultStallTimeout is how long a Disconnect subscription may stay full
// when its options give no stall timeout.
const DefaultStallTimeout = 10 * time.Second

// ErrStalled is returned by Next once a Disconnect subscription's reader
// took nothing for its stall timeout while its buffer was full.
var ErrStalled = errors.New("zot: subscriber stalled: it took no event for its stall timeout")

// ErrSubscriptionClosed is returned by Next after the reader closed the
// subscription.
var ErrSubscriptionClosed = errors.New("zot: subscription closed")

// SubscribeOptions configures a subscription. A zero field takes the
// default its comment states.
type SubscribeOptions struct {
	// Buffer bounds the values that wait for the reader before the work
	// waits (see Policy); 0 means DefaultSubscriptionBuffer. The bound
	// holds for the events of work: what comes from outside a piece of
	// work never waits, and is dropped past the bound when the schema
	// marks its type droppable (wire.DroppableEvent).
	Buffer int
	// Policy is what the work does when the buffer is full.
	Policy Policy
	// StallTimeout is, with Disconnect, how long the buffer may stay full
	// before the reader is disconnected; 0 means DefaultStallTimeout.
	StallTimeout time.Duration
}

// Subscription is a bounded, ordered queue of values from the engine to
// one reader, who takes them with Next (or Take), with the backpressure
// policy its options give. Values are added without blocking (Push,
// Offer); whoever produces them waits for room, when it may, with Wait.
// A Subscription has no goroutine of its own.
//
// A session's events reach a reader this way: [Session.Subscribe] for
// every event of the session, Work.Events for the events of one piece of
// work. A door whose output carries more than the engine's events (its
// own notifications, interleaved in order) may keep a Subscription of its
// own values, filled by the Sink of its work.
//
// Its methods are safe for concurrent use; Next and Take serve one reader
// at a time.
type Subscription[T any] struct {
	limit   int
	policy  Policy
	stall   time.Duration
	onClose func() // set by Session.Subscribe before it is shared: forget the subscription

	mu      sync.Mutex
	items   []T
	head    int           // items[:head] were taken
	end     error         // set: no value is added any more; Next returns it once none waits
	wake    chan struct{} // a value was added or the subscription ended (for the reader)
	room    chan struct{} // closed when a value is taken; nil while nobody waits for room
	dropped int64
}

// NewSubscription returns a subscription of values of type T.
func NewSubscription[T any](opts SubscribeOptions) *Subscription[T] {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultSubscriptionBuffer
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = DefaultStallTimeout
	}
	return &Subscription[T]{
		limit:  opts.Buffer,
		policy: opts.Policy,
		stall:  opts.StallTimeout,
		wake:   make(chan struct{}, 1),
	}
}

// Push adds v and never blocks; past the bound too (see Wait). It reports
// false, dropping v, once the subscription has ended.
func (q *Subscription[T]) Push(v T) bool {
	q.mu.Lock()
	if q.end != nil {
		q.mu.Unlock()
		return false
	}
	q.appendLocked(v)
	q.mu.Unlock()
	q.poke()
	return true
}

// PushAll adds vs, in order and in one step (no value pushed meanwhile
// comes between them), and never blocks. It reports false, dropping vs,
// once the subscription has ended.
func (q *Subscription[T]) PushAll(vs []T) bool {
	q.mu.Lock()
	if q.end != nil {
		q.mu.Unlock()
		return false
	}
	for _, v := range vs {
		q.appendLocked(v)
	}
	q.mu.Unlock()
	q.poke()
	return true
}

// Offer adds v unless the buffer is full or the subscription has ended;
// it never blocks, and reports whether v was added. A value it drops is
// counted (Dropped).
func (q *Subscription[T]) Offer(v T) bool {
	q.mu.Lock()
	if q.end != nil || len(q.items)-q.head >= q.limit {
		q.dropped++
		q.mu.Unlock()
		return false
	}
	q.appendLocked(v)
	q.mu.Unlock()
	q.poke()
	return true
}

// appendLocked adds v at the tail, reusing the room taken values left at
// the head. The caller holds q.mu.
func (q *Subscription[T]) appendLocked(v T) {
	if len(q.items) == cap(q.items) && q.head > 0 {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, v)
}

// poke wakes the reader.
func (q *Subscription[T]) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wait returns once the buffer has room, as the policy says: with Block
// it waits until it has, or ctx ends (ctx.Err()); with Disconnect it
// waits at most the stall timeout, then disconnects the reader and
// returns ErrStalled. After the subscription ended it returns at once,
// with why it ended. A producer calls it before Push, outside its locks.
func (q *Subscription[T]) Wait(ctx context.Context) error {
	var stall <-chan time.Time
	for {
		q.mu.Lock()
		switch {
		case q.end != nil:
			err := q.end
			q.mu.Unlock()
			return err
		case len(q.items)-q.head < q.limit:
			q.mu.Unlock()
			return nil
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		if stall == nil && q.policy == Disconnect {
			t := time.NewTimer(q.stall)
			defer t.Stop()
			stall = t.C
		}
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		case <-stall:
			q.stop(ErrStalled)
			if q.onClose != nil {
				q.onClose() // the session forgets a reader it disconnected
			}
			return ErrStalled
		}
	}
}

// Next takes the oldest waiting value, waiting for one until ctx ends.
// Once the subscription has ended it returns, after every value that
// waits, io.EOF (the producer ended it: End), ErrStalled or
// ErrSubscriptionClosed.
func (q *Subscription[T]) Next(ctx context.Context) (T, error) {
	var zero T
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			v := q.items[q.head]
			q.items[q.head] = zero
			q.head++
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			}
			q.tookLocked()
			q.mu.Unlock()
			return v, nil
		}
		err := q.end
		q.mu.Unlock()
		if err != nil {
			return zero, err
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// Take takes every waiting value at once, in order, waiting for one until
// ctx ends; it ends as Next does. The slice returned is the caller's. buf,
// when not nil, becomes the subscription's storage for what comes next:
// pass the slice the previous Take returned once done with it, so that
// values are moved in batches without copying.
func (q *Subscription[T]) Take(ctx context.Context, buf []T) ([]T, error) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			got := q.items[q.head:]
			clear(buf)
			q.items, q.head = buf[:0], 0
			q.tookLocked()
			q.mu.Unlock()
			return got, nil
		}
		err := q.end
		q.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// tookLocked tells the producers waiting for room that values were taken.
// The caller holds q.mu.
func (q *Subscription[T]) tookLocked() {
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}

// End says no value follows: the reader takes what waits, then Next
// returns io.EOF. Later values are dropped. It is the producer's close;
// calling it again does nothing.
func (q *Subscription[T]) End() { q.finish(io.EOF, false) }

// Close is the reader's: it leaves, the values waiting are dropped, no
// producer waits for it any more, and Next returns ErrSubscriptionClosed.
// A subscription of a session's events (Session.Subscribe) stops
// receiving them. It is safe to call more than once.
func (q *Subscription[T]) Close() {
	q.stop(ErrSubscriptionClosed)
	if q.onClose != nil {
		q.onClose()
	}
}

// stop ends the subscription with err, dropping what waits.
func (q *Subscription[T]) stop(err error) { q.finish(err, true) }

// finish ends the subscription with err unless it has ended; with drop,
// the values waiting are dropped. Producers waiting for room and the
// reader waiting for a value return.
func (q *Subscription[T]) finish(err error, drop bool) {
	q.mu.Lock()
	if q.end == nil {
		q.end = err
	}
	if drop {
		clear(q.items)
		q.items, q.head = nil, 0
	}
	q.tookLocked()
	q.mu.Unlock()
	q.poke()
}

// Err returns why the subscription ended, or nil while it has not.
func (q *Subscription[T]) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.end
}

// Len returns how many values wait for the reader.
func (q *Subscription[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// Dropped returns how many values Offer dropped.
func (q *Subscription[T]) Dropped() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

// put adds an event of a session to q: past the bound it is dropped when
// the schema marks its type droppable, and kept otherwise.
func put(q *Subscription[wire.Event], ev wire.Event) {
	if wire.DroppableEvent(ev) {
		q.Offer(ev)
		return
	}
	q.Push(ev)
}
