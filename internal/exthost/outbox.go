package exthost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"zot.dev/zot/internal/ndjson"
)

// outboxHighWater is how many frames may wait for an extension that does
// not read its input before its lifecycle events are dropped.
const outboxHighWater = ndjson.DefaultHighWater

// errOutboxClosed refuses a frame sent after close.
var errOutboxClosed = errors.New("its input is closed")

// outbox writes frames to an extension's stdin, one whole frame after
// another, in the order they were sent.
//
// A frame sent while nothing waits and nothing is being written is
// written at once from the sender's goroutine, by one write that never
// blocks (a pipe with room takes a small frame whole): a request on the
// path of a tool call or an intercept costs no hand-off to another
// goroutine. What the pipe does not take at once, and every frame sent
// while others wait, is queued for the outbox's goroutine, which writes
// the queue in order and may block on a peer that does not read. So
// send never blocks, and frames never interleave: the direct write is
// made under the lock that orders the queue, only when the queue is
// empty and the goroutine is not writing.
type outbox struct {
	f      *os.File // the write end of the extension's stdin
	direct *directWriter

	wake chan struct{} // a token when the goroutine has work, or at close
	done chan struct{} // closed when the goroutine has ended and f is closed

	mu      sync.Mutex
	scratch []byte // the direct write's encode buffer
	queue   []byte // encoded frames waiting for the goroutine
	spare   []byte // the buffer the goroutine wrote last, for reuse
	frames  int    // frames (or parts of one) in queue
	writing bool   // the goroutine is writing what it took from queue
	closing bool   // close was called: nothing more is accepted
	err     error  // the first write error: later frames are dropped
}

// newOutbox returns the outbox of f and starts its goroutine; close ends
// it and closes f.
func newOutbox(f *os.File) *outbox {
	o := &outbox{f: f, direct: newDirectWriter(f), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go o.run()
	return o
}

// send writes v as one line, at once or after the frames that wait. It
// never blocks. It returns the outbox's write error, or errOutboxClosed
// after close; the frame is dropped then.
func (o *outbox) send(v ndjson.Appender) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.stateLocked(); err != nil {
		return err
	}
	if o.writing || len(o.queue) > 0 {
		o.queue = append(v.AppendJSON(o.queue), '\n')
		o.frames++
		o.poke()
		return nil
	}
	o.scratch = append(v.AppendJSON(o.scratch[:0]), '\n')
	n, err := o.direct.write(o.scratch)
	switch {
	case err != nil:
		o.err = fmt.Errorf("writing to the extension: %w", err)
		return o.err
	case n < len(o.scratch):
		// The pipe is full: the rest goes first when it has room.
		o.queue = append(o.queue, o.scratch[n:]...)
		o.frames++
		o.poke()
	}
	if cap(o.scratch) > 1<<20 {
		o.scratch = nil // a big frame's buffer is not kept
	}
	return nil
}

// stateLocked returns why no frame is accepted, if so.
func (o *outbox) stateLocked() error {
	switch {
	case o.err != nil:
		return o.err
	case o.closing:
		return errOutboxClosed
	}
	return nil
}

// hasRoom reports whether fewer than outboxHighWater frames wait and the
// outbox takes frames.
func (o *outbox) hasRoom() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stateLocked() == nil && o.frames < outboxHighWater
}

// full reports whether the outbox takes frames but outboxHighWater of
// them wait already.
func (o *outbox) full() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stateLocked() == nil && o.frames >= outboxHighWater
}

// poke wakes the goroutine if it sleeps.
func (o *outbox) poke() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run writes what is queued until close, then closes f.
func (o *outbox) run() {
	defer close(o.done)
	defer o.f.Close()
	for {
		o.mu.Lock()
		for len(o.queue) == 0 || o.err != nil {
			if o.closing || o.err != nil {
				o.mu.Unlock()
				return
			}
			o.mu.Unlock()
			<-o.wake
			o.mu.Lock()
		}
		buf := o.queue
		o.queue, o.spare = o.spare[:0], nil
		o.frames = 0
		o.writing = true
		o.mu.Unlock()

		_, err := o.f.Write(buf)

		o.mu.Lock()
		o.writing = false
		if err != nil && o.err == nil {
			o.err = fmt.Errorf("writing to the extension: %w", err)
		}
		if cap(buf) <= 1<<20 {
			o.spare = buf[:0]
		}
		o.mu.Unlock()
	}
}

// close takes no more frames, lets the goroutine write what waits, and
// closes the extension's stdin: the end of its input. It returns once
// that is done, or when ctx ends: then stdin is closed at once, which
// ends a write stuck on an extension that does not read. It may be
// called more than once.
func (o *outbox) close(ctx context.Context) {
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	o.poke()
	select {
	case <-o.done:
	case <-ctx.Done():
		o.f.Close() // unblocks the goroutine's write; it then ends
		<-o.done
	}
}

// closeNow drops what waits and closes the extension's stdin at once.
func (o *outbox) closeNow() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o.close(ctx)
}
