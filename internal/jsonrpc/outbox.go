package jsonrpc

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// outbox is a connection's bounded outgoing queue and its one writer
// goroutine. Frames are written in the order they were queued. The queue
// is one Batch, which the writer takes whole and hands to the transport
// with one Write while the next fills the batch it wrote before: a frame
// is copied once, into the queue, or encoded there directly (sendFunc).
type outbox struct {
	t         Transport
	unsent    func() (int, bool) // the transport's Unread; nil when unknown
	maxFrames int
	maxBytes  int
	onFail    func(error) // called once, on the writer's first error or a stall
	check     func([]byte) error
	log       func(format string, args ...any)

	mu      sync.Mutex
	queue   *Batch // the queued frames
	closing bool
	err     error // set once: later frames are refused
	// taken is when the client last made progress: the writer took a
	// batch, wrote some of its bytes, or the queue last got work.
	taken time.Time
	// stall is how long the client may make no progress while a sender
	// waits for room; hurry shortens it.
	stall time.Duration
	// lastUnsent is what unsent said at the last look.
	lastUnsent int
	writing    bool // the writer is writing a batch
	// spare is the batch the writer wrote last, given back to the queue
	// when the writer takes the next one.
	spare *Batch
	// room, made by a sender that waits for room (nil while none does),
	// is closed when the queue empties.
	room chan struct{}
	wake chan struct{} // a token when there is work or at close
	done chan struct{} // closed when the writer has ended
}

func newOutbox(t Transport, opts Options, onFail func(error), log func(string, ...any)) *outbox {
	o := &outbox{
		t:         t,
		maxFrames: opts.QueueFrames,
		maxBytes:  opts.QueueBytes,
		stall:     opts.StallTimeout,
		onFail:    onFail,
		check:     opts.Check,
		log:       log,
		taken:     time.Now(),
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	if u, ok := t.(unreader); ok {
		if _, ok := u.Unread(); ok {
			o.unsent = u.Unread
		}
	}
	progress := func() {
		// The client took part of a batch.
		o.mu.Lock()
		o.taken = time.Now()
		o.mu.Unlock()
	}
	o.queue = &Batch{progress: progress}
	o.spare = &Batch{progress: progress}
	go o.run()
	return o
}

// fullLocked reports whether a frame of n bytes must wait. One frame is
// always let into an empty queue, however big.
func (o *outbox) fullLocked(n int) bool {
	frames := o.queue.Len()
	return frames > 0 && (frames >= o.maxFrames || o.queue.Size()+n > o.maxBytes)
}

// send queues frame, waiting while the queue is full until ctx ends. When
// the queue stays full and the writer takes nothing for the stall
// timeout, the connection fails with ErrStalled.
func (o *outbox) send(ctx context.Context, frame []byte) error {
	return o.sendFunc(ctx, len(frame), func(b []byte) []byte { return append(b, frame...) })
}

// sendFunc queues the frame appendFrame appends to the queue's buffer
// (one JSON value without its LF, about size bytes), as send does: the
// frame is encoded where it will be written from, and nothing else holds
// it. appendFrame runs with the queue locked, so it must only append.
func (o *outbox) sendFunc(ctx context.Context, size int, appendFrame func([]byte) []byte) error {
	return o.sendFuncs(ctx, true, 1, func(int) int { return size }, func(b []byte, _ int) []byte { return appendFrame(b) })
}

// sendFuncs is sendFunc for n frames in a row, frame i about size(i)
// bytes: as many as fit are queued under one lock, the rest after the
// writer has made room. With wait false nothing waits (post).
func (o *outbox) sendFuncs(ctx context.Context, wait bool, n int, size func(i int) int, appendFrame func(b []byte, i int) []byte) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for i := 0; ; {
		o.mu.Lock()
		switch {
		case o.err != nil:
			err := o.err
			o.mu.Unlock()
			return err
		case o.closing:
			o.mu.Unlock()
			return ErrClosed
		}
		from := i
		for ; i < n && o.takesLocked(size(i)+1, wait); i++ {
			if o.queue.Len() == 0 {
				// The stall clock starts when the writer has work.
				o.taken = time.Now()
			}
			o.queue.data = appendFrame(o.queue.data, i)
			o.queue.endMessage()
			if o.check != nil {
				frame := o.queue.Message(o.queue.Len() - 1)
				if err := o.check(frame); err != nil {
					o.log("outgoing frame fails its check: %v: %s", err, frame)
				}
			}
		}
		if i > from {
			o.mu.Unlock()
			o.poke()
			if i == n {
				return nil
			}
			continue
		}
		if !wait {
			frames := o.queue.Len()
			o.mu.Unlock()
			o.fail(fmt.Errorf("%w: %d frames behind", ErrStalled, frames))
			continue
		}
		if err := o.awaitRoomLocked(ctx, &timer); err != nil {
			return err
		}
	}
}

// lag is how far past its bound a queue added to without waiting
// (post) may grow: a client that falls further behind is dropped.
const lag = 4

// takesLocked reports whether a frame of n bytes is queued now: while
// the queue has room or, for a sender that does not wait, while it is
// less than lag times its bound. The caller holds o.mu.
func (o *outbox) takesLocked(n int, wait bool) bool {
	if !o.fullLocked(n) {
		return true
	}
	return !wait && o.queue.Len() < lag*o.maxFrames && o.queue.Size()+n <= lag*o.maxBytes
}

// awaitRoomLocked waits, for a sender that found the queue full, until
// the writer made room, the client made no progress for the stall
// timeout (the outbox then fails with ErrStalled), or ctx ends (its
// error is returned). It is called with o.mu held and returns with it
// released; timer is reused from one wait to the next.
func (o *outbox) awaitRoomLocked(ctx context.Context, timer **time.Timer) error {
	if o.room == nil {
		o.room = make(chan struct{})
	}
	room := o.room
	o.lookLocked()
	stall := o.stall
	left := stall - time.Since(o.taken)
	o.mu.Unlock()
	if left <= 0 {
		o.fail(fmt.Errorf("%w for %v", ErrStalled, stall))
		return nil
	}
	if *timer == nil {
		*timer = time.NewTimer(o.nextLook(left))
	} else {
		(*timer).Reset(o.nextLook(left))
	}
	select {
	case <-room:
	case <-(*timer).C:
	case <-ctx.Done():
		return fmt.Errorf("waiting for room in the outgoing queue: %w", context.Cause(ctx))
	}
	return nil
}

// ready waits until the queue has room for a frame (see sendFuncs), the
// outbox failed or closed (its error), or ctx ends.
func (o *outbox) ready(ctx context.Context) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		o.mu.Lock()
		switch {
		case o.err != nil:
			err := o.err
			o.mu.Unlock()
			return err
		case o.closing:
			o.mu.Unlock()
			return ErrClosed
		case !o.fullLocked(1):
			o.mu.Unlock()
			return nil
		}
		if err := o.awaitRoomLocked(ctx, &timer); err != nil {
			return err
		}
	}
}

// fail keeps err as the outbox's error (the first one wins) and reports
// it once.
func (o *outbox) fail(err error) {
	o.mu.Lock()
	if o.err != nil {
		o.mu.Unlock()
		return
	}
	o.err = err
	o.queue.data, o.queue.ends = nil, nil
	o.openRoomLocked()
	o.mu.Unlock()
	o.poke()
	o.onFail(err)
}

// openRoomLocked wakes the senders waiting for room. The caller holds
// o.mu.
func (o *outbox) openRoomLocked() {
	if o.room != nil {
		close(o.room)
		o.room = nil
	}
}

func (o *outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// hurry shortens the stall timeout to d (a shutdown): a client that
// makes no progress for d while a sender waits for room, or while the
// last frames are written, is let go; the time it already made none
// counts, up to d. It never lengthens it.
func (o *outbox) hurry(d time.Duration) {
	o.mu.Lock()
	if d < o.stall {
		o.stall = d
		if now := time.Now(); o.taken.Before(now.Add(-d)) {
			// At most d of the past counts against the client.
			o.taken = now.Add(-d)
		}
	}
	room := o.room
	o.room = nil
	o.mu.Unlock()
	if room != nil {
		close(room) // the waiting senders look at the clock again
	}
}

// waitDone waits until the writer has ended, or the client made no
// progress for the stall timeout: then the outbox fails with ErrStalled
// and the writer ends once its stream is closed.
func (o *outbox) waitDone(what string) bool {
	for {
		o.mu.Lock()
		o.lookLocked()
		stall := o.stall
		left := stall - time.Since(o.taken)
		o.mu.Unlock()
		if left <= 0 {
			o.fail(fmt.Errorf("%w for %v %s", ErrStalled, stall, what))
			return false
		}
		t := time.NewTimer(o.nextLook(left))
		select {
		case <-o.done:
			t.Stop()
			return true
		case <-t.C:
		}
	}
}

// close stops taking frames; the writer writes what is queued and ends.
// It does not wait: see done.
func (o *outbox) close() {
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	o.poke()
}

// flushed reports whether every queued frame has been written (or the
// outbox failed).
func (o *outbox) flushed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err != nil || (o.queue.Len() == 0 && !o.writing)
}

// Err returns the outbox's error, or nil.
func (o *outbox) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// run takes the whole queue as one batch, writes it, and repeats until
// closed and empty, or failed.
func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		for o.queue.Len() == 0 && !o.closing && o.err == nil {
			o.mu.Unlock()
			<-o.wake
			// Woken by a frame: give its producer, mid-burst, one chance
			// to add the next ones first, so a burst costs a few writes,
			// not one per frame (a turn's producer queues its frames one
			// at a time, from the engine's worker).
			runtime.Gosched()
			o.mu.Lock()
		}
		if o.err != nil || o.queue.Len() == 0 {
			o.mu.Unlock()
			return
		}
		batch := o.queue
		o.queue, o.spare = o.spare, nil
		o.queue.Reset()
		o.taken = time.Now()
		o.writing = true
		o.openRoomLocked()
		o.mu.Unlock()

		// What was queued is written for as long as the transport lives,
		// even after the connection's reading failed: a write that waits
		// ends when the transport is closed (Conn.abort), not with a
		// context.
		err := o.t.Write(context.Background(), batch)
		frames := batch.Len()
		if cap(batch.data) > 1<<20 {
			batch.data = nil // a huge frame's buffer is not kept
		}
		o.mu.Lock()
		o.writing = false
		o.spare = batch
		o.mu.Unlock()
		if err != nil {
			o.fail(fmt.Errorf("writing to the client: %w", err))
			return
		}
		if frames < 64 {
			// Give a producer that is mid-burst one chance to add its
			// next frames, so that a burst costs a few writes, not one
			// per frame (as ndjson.Writer does for zot rpc).
			runtime.Gosched()
		}
	}
}

// lookLocked counts it as the client's progress when the kernel holds
// fewer unread bytes for it than at the last look. The caller holds
// o.mu.
func (o *outbox) lookLocked() {
	if o.unsent == nil {
		return
	}
	n, ok := o.unsent()
	if !ok {
		return
	}
	if n < o.lastUnsent {
		o.taken = time.Now()
	}
	o.lastUnsent = n
}

// nextLook is how long a wait for the client lasts before it looks at
// its progress again: left, or a tick when the kernel can be asked.
func (o *outbox) nextLook(left time.Duration) time.Duration {
	if o.unsent == nil {
		return left
	}
	return min(left, o.tick())
}

// tick is how often a wait for the client looks at its progress: a
// tenth of the stall timeout, between 50 ms and 1 s.
func (o *outbox) tick() time.Duration {
	o.mu.Lock()
	d := o.stall / 10
	o.mu.Unlock()
	return min(max(d, 50*time.Millisecond), time.Second)
}
