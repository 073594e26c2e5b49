package ndjson

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultHighWater is the number of waiting frames at which
// [Writer.Wait] blocks when [WriterOptions.HighWater] is 0.
const DefaultHighWater = 1024

// WriterOptions configures a [Writer]. The zero value is ready to use.
type WriterOptions struct {
	// HighWater is the number of waiting frames at which Wait blocks;
	// 0 means DefaultHighWater. Send ignores it.
	HighWater int
	// Check, when set, is called on the writer's goroutine with each
	// encoded frame (without its LF) before it is written. An error is
	// reported to Log and the frame is written anyway: it is a debugging
	// aid, e.g. validating every frame against the protocol's schema.
	// Check must not keep the slice.
	Check func(frame []byte) error
	// Log receives Check's failures; nil discards them.
	Log io.Writer
	// CloseOnCancel makes Close close the underlying writer, when it is
	// an io.Closer, if Close's context ends before everything queued is
	// written: this unblocks a write stuck on a reader that stopped
	// reading (an io.Pipe, a pipe to a hung process).
	CloseOnCancel bool
}

// Writer writes values as lines to an io.Writer it owns. One goroutine
// encodes the values in the order they were sent and flushes whenever no
// frame is waiting, so a burst of frames costs one write and a lone frame
// is written at once.
//
// Send never blocks, so it may be called while holding locks;
// backpressure is Wait's job, which producers call before sending,
// outside their locks. The first write error is kept: later frames are
// dropped and Wait and SendSync return it. The methods of a Writer are
// safe for concurrent use.
type Writer struct {
	dst       io.Writer
	out       *bufio.Writer
	opts      WriterOptions
	highWater int

	wake    chan struct{} // a token when the queue gets its first frame, or at Close
	done    chan struct{} // closed when the goroutine has ended
	abandon atomic.Bool   // set when Close gave up: drop what is left

	// Owned by the goroutine.
	scratch []byte // the encode buffer, reused
	failed  error  // the first write error, mirrored into err
	dropped bool   // a frame was dropped because Close gave up

	mu      sync.Mutex
	queue   []frame // waiting frames, in order
	closing bool    // Close was called: no frame is accepted
	err     error   // the first write error
	gaveUp  error   // why a Close gave up before everything was written
	// changed, when not nil, is closed (and set to nil) when the queue
	// shrinks from at least highWater frames, at Close and at the first
	// write error: Wait re-checks then.
	changed chan struct{}
}

// frame is one value to write.
type frame struct {
	v Appender // nil for a flush barrier
	// flushed, when set, receives the outcome once the frame is on the
	// underlying writer (or dropped).
	flushed chan error
}

// NewWriter returns a Writer of w and starts its goroutine; Close ends
// it.
func NewWriter(w io.Writer, opts WriterOptions) *Writer {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	hw := opts.HighWater
	if hw <= 0 {
		hw = DefaultHighWater
	}
	wr := &Writer{
		dst:       w,
		out:       bufio.NewWriterSize(w, 64<<10),
		opts:      opts,
		highWater: hw,
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	go wr.run()
	return wr
}

// Send queues v to be written as one line. It never blocks. A nil v, and
// values sent after Close or after a write error, are dropped.
func (w *Writer) Send(v Appender) {
	if v == nil {
		return
	}
	w.enqueue(frame{v: v})
}

// SendSync queues v and waits until it has been written and flushed to
// the underlying writer. It returns the write error if writing failed,
// ErrClosed if the writer was closed before v was written, or ctx's error
// (v may still be written later). A nil v writes nothing and waits for
// the frames sent before it.
func (w *Writer) SendSync(ctx context.Context, v Appender) error {
	f := frame{v: v, flushed: make(chan error, 1)}
	if err := w.enqueue(f); err != nil {
		return err
	}
	select {
	case err := <-f.flushed:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for a frame to be flushed: %w", ctx.Err())
	}
}

// enqueue adds f to the queue, or says why not.
func (w *Writer) enqueue(f frame) error {
	w.mu.Lock()
	if err := w.stateLocked(); err != nil {
		w.mu.Unlock()
		return err
	}
	w.queue = append(w.queue, f)
	first := len(w.queue) == 1
	w.mu.Unlock()
	if first {
		w.poke()
	}
	return nil
}

// stateLocked returns the error that refuses new frames, if any.
func (w *Writer) stateLocked() error {
	switch {
	case w.err != nil:
		return w.err
	case w.closing:
		return ErrClosed
	}
	return nil
}

// Wait blocks until fewer than the high-water mark of frames are waiting
// to be written. It returns nil then, the write error if writing failed,
// ErrClosed once Close was called, or ctx's error when ctx ends first.
// Producers call it before Send, outside their own locks.
func (w *Writer) Wait(ctx context.Context) error {
	for {
		w.mu.Lock()
		if err := w.stateLocked(); err != nil {
			w.mu.Unlock()
			return err
		}
		if len(w.queue) < w.highWater {
			w.mu.Unlock()
			return nil
		}
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for room in the output queue: %w", ctx.Err())
		}
	}
}

// Err returns the first error writing to the underlying writer, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Backlog returns how many frames wait to be written. A producer that
// must never block, yet must not grow the queue without bound (events a
// peer pushes at its own pace), drops what it cannot afford by it.
func (w *Writer) Backlog() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// Done returns a channel that is closed when the writer's goroutine has
// ended: after Close has written everything, or, when Close gave up, once
// the write in progress returns.
func (w *Writer) Done() <-chan struct{} { return w.done }

// Close stops accepting frames (later Sends are dropped, SendSync and
// Wait return ErrClosed), writes and flushes what is queued and returns
// the first write error, or nil. If ctx ends first, Close returns ctx's
// error at once: what is still queued is dropped and, with
// CloseOnCancel, the underlying writer is closed to unblock a stuck
// write. Close may be called more than once; each call waits as the
// first did and, once everything has ended, returns the write error,
// else the error of a Close that gave up and dropped frames, else nil.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closing {
		w.closing = true
		w.broadcastLocked()
	}
	w.mu.Unlock()
	w.poke()
	select {
	case <-w.done:
		return w.closeResult()
	default:
	}
	select {
	case <-w.done:
		return w.closeResult()
	case <-ctx.Done():
	}
	err := fmt.Errorf("closing the writer: %w", ctx.Err())
	w.abandon.Store(true)
	w.mu.Lock()
	first := w.gaveUp == nil
	if first {
		w.gaveUp = err
	}
	w.mu.Unlock()
	if c, ok := w.dst.(io.Closer); ok && first && w.opts.CloseOnCancel {
		if cerr := c.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing the output: %w", cerr))
		}
	}
	return err
}

// closeResult is what Close returns once the goroutine has ended: the
// write error, else why an earlier Close gave up if frames were dropped.
func (w *Writer) closeResult() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.dropped { // read after done: the goroutine has ended
		return w.gaveUp
	}
	return nil
}

func (w *Writer) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// broadcastLocked wakes every Wait. The caller holds w.mu.
func (w *Writer) broadcastLocked() {
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}

// run writes batches of frames until Close was called and the queue is
// empty.
func (w *Writer) run() {
	defer close(w.done)
	var batch []frame
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closing {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if len(w.queue) == 0 {
			w.mu.Unlock()
			return // closing, and everything is flushed
		}
		batch, w.queue = w.queue, batch[:0]
		if len(batch) >= w.highWater {
			w.broadcastLocked()
		}
		w.mu.Unlock()

		w.writeBatch(batch)
		clear(batch) // let the values go
		if cap(batch) > 4*w.highWater {
			batch = nil
		}
	}
}

// writeBatch writes the frames of one batch, flushes unless more frames
// are waiting (or one of the batch waits for its flush), and tells the
// SendSync callers.
func (w *Writer) writeBatch(batch []frame) {
	synced := false
	for _, f := range batch {
		switch {
		case f.v == nil || w.failed != nil:
		case w.abandon.Load():
			w.dropped = true
		default:
			w.write(f.v)
		}
		synced = synced || f.flushed != nil
	}
	if !synced && w.waiting() == 0 {
		// Give a producer that is mid-burst one chance to add its next
		// frame, so a burst costs one write, not one per line.
		runtime.Gosched()
	}
	if synced || w.waiting() == 0 {
		w.flush()
	}
	if !synced {
		return
	}
	outcome := w.failed
	if outcome == nil && w.abandon.Load() {
		outcome = ErrClosed
	}
	for _, f := range batch {
		if f.flushed != nil {
			f.flushed <- outcome // buffered, and the only send
		}
	}
}

// waiting returns the number of frames queued.
func (w *Writer) waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// write encodes v and writes it with its LF to the buffer.
func (w *Writer) write(v Appender) {
	b := w.scratch[:0]
	if h, ok := v.(SizeHinter); ok {
		if n := h.SizeHint() + 1; n > cap(b) {
			b = make([]byte, 0, n) // the LF too
		}
	}
	b = v.AppendJSON(b)
	if w.opts.Check != nil {
		if err := w.opts.Check(b); err != nil {
			fmt.Fprintf(w.opts.Log, "ndjson: outbound frame fails its check: %v: %s\n", err, b)
		}
	}
	b = append(b, '\n')
	if _, err := w.out.Write(b); err != nil {
		w.fail(fmt.Errorf("writing a frame: %w", err))
	}
	if cap(b) <= maxKeep {
		w.scratch = b
	} else {
		w.scratch = nil
	}
}

func (w *Writer) flush() {
	if w.failed != nil {
		return
	}
	if w.abandon.Load() {
		w.dropped = w.dropped || w.out.Buffered() > 0
		return
	}
	if err := w.out.Flush(); err != nil {
		w.fail(fmt.Errorf("flushing frames: %w", err))
	}
}

// fail keeps err as the writer's error and wakes every Wait. Frames
// already queued are dropped as the goroutine reaches them, and their
// SendSync callers get err.
func (w *Writer) fail(err error) {
	w.failed = err
	w.mu.Lock()
	w.err = err // no frame is accepted from now on
	w.broadcastLocked()
	w.mu.Unlock()
}

// Ready is Wait for a producer that only waits for room and learns of a
// failure elsewhere (an engine.Work's Ready).
func (w *Writer) Ready(ctx context.Context) { _ = w.Wait(ctx) }
