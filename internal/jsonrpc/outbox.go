package jsonrpc

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
)

// outbox is a connection's bounded outgoing queue and its one writer
// goroutine. Frames are written in the order they were queued; each
// batch the writer takes is written with one Write.
type outbox struct {
	w         io.Writer
	maxFrames int
	maxBytes  int
	stall     time.Duration
	onFail    func(error) // called once, on the writer's first error or a stall
	check     func([]byte) error
	log       func(format string, args ...any)

	mu      sync.Mutex
	queue   [][]byte
	bytes   int
	closing bool
	err     error     // set once: later frames are refused
	taken   time.Time // when the writer last took a batch, or the queue last got work
	writing bool      // the writer is writing a batch
	// room, made by a sender that waits for room (nil while none does),
	// is closed when the queue empties.
	room chan struct{}
	wake chan struct{} // a token when there is work or at close
	done chan struct{} // closed when the writer has ended

	// The writer's own: its write buffer, and the batch slice it gives
	// back to the queue when the next batch is taken.
	writeBuf []byte
	spare    [][]byte
}

func newOutbox(w io.Writer, opts Options, onFail func(error), log func(string, ...any)) *outbox {
	o := &outbox{
		w:         w,
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
	go o.run()
	return o
}

// fullLocked reports whether a frame of n bytes must wait. One frame is
// always let into an empty queue, however big.
func (o *outbox) fullLocked(n int) bool {
	return len(o.queue) > 0 && (len(o.queue) >= o.maxFrames || o.bytes+n > o.maxBytes)
}

// send queues frame, waiting while the queue is full until ctx ends. When
// the queue stays full and the writer takes nothing for the stall
// timeout, the connection fails with ErrStalled.
func (o *outbox) send(ctx context.Context, frame []byte) error {
	if o.check != nil {
		if err := o.check(frame); err != nil {
			o.log("outgoing frame fails its check: %v: %s", err, frame)
		}
	}
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
		case !o.fullLocked(len(frame)):
			if len(o.queue) == 0 {
				// The stall clock starts when the writer has work.
				o.taken = time.Now()
			}
			o.queue = append(o.queue, frame)
			o.bytes += len(frame)
			o.mu.Unlock()
			o.poke()
			return nil
		}
		if o.room == nil {
			o.room = make(chan struct{})
		}
		room := o.room
		left := o.stall - time.Since(o.taken)
		o.mu.Unlock()
		if left <= 0 {
			o.fail(fmt.Errorf("%w for %v", ErrStalled, o.stall))
			continue
		}
		if timer == nil {
			timer = time.NewTimer(left)
		} else {
			timer.Reset(left)
		}
		select {
		case <-room:
		case <-timer.C:
		case <-ctx.Done():
			return fmt.Errorf("waiting for room in the outgoing queue: %w", context.Cause(ctx))
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
	o.queue, o.bytes = nil, 0
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
	return o.err != nil || (len(o.queue) == 0 && !o.writing)
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
		for len(o.queue) == 0 && !o.closing && o.err == nil {
			o.mu.Unlock()
			<-o.wake
			o.mu.Lock()
		}
		if o.err != nil || len(o.queue) == 0 {
			o.mu.Unlock()
			return
		}
		batch := o.queue
		o.queue, o.bytes = o.spare, 0
		o.taken = time.Now()
		o.writing = true
		o.openRoomLocked()
		o.mu.Unlock()

		buf := o.writeBuf[:0]
		for _, f := range batch {
			buf = append(append(buf, f...), '\n')
		}
		_, err := o.w.Write(buf)
		o.mu.Lock()
		o.writing = false
		o.mu.Unlock()
		if cap(buf) <= 1<<20 {
			o.writeBuf = buf
		} else {
			o.writeBuf = nil
		}
		clear(batch) // the frames are not kept alive by the spare slice
		o.spare = batch[:0]
		if err != nil {
			o.fail(fmt.Errorf("writing to the client: %w", err))
			return
		}
		if len(batch) < 64 {
			// Give a producer that is mid-burst one chance to add its
			// next frames, so that a burst costs a few writes, not one
			// per frame (as ndjson.Writer does for zot rpc).
			runtime.Gosched()
		}
	}
}
