package boundlog

import (
	"fmt"
	"io"
	"sync"
)

// AsyncBytes is how many bytes of log an Async holds for its writer by
// default before it drops lines.
const AsyncBytes = 1 << 20

// Async is a log that never makes its caller wait for the writer under
// it: each Write is copied into a queue and written from a goroutine of
// the Async's own, started when there is something to write and ended
// when the queue is empty. It is for what is logged while a lock is held
// (the stamping of a session's events): a stderr nobody reads must not
// hold the lock. Past its bound, writes are dropped and counted; the
// count is written once the queue has drained. Close waits for what is
// queued; later writes go straight to the writer. Its methods are safe
// for concurrent use.
type Async struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	queue   [][]byte
	size    int
	dropped int
	closed  bool
	idle    chan struct{} // closed when the goroutine that writes ends; nil while none runs
}

// NewAsync returns an Async that writes to w and holds at most max bytes
// for it (AsyncBytes when max <= 0).
func NewAsync(w io.Writer, max int) *Async {
	if max <= 0 {
		max = AsyncBytes
	}
	return &Async{w: w, max: max}
}

// Write queues a copy of p for the writer; it never blocks. After Close
// it writes p at once.
func (a *Async) Write(p []byte) (int, error) {
	a.mu.Lock()
	if a.closed && a.idle == nil {
		a.mu.Unlock()
		return a.w.Write(p)
	}
	if a.size+len(p) > a.max {
		a.dropped++
		a.mu.Unlock()
		return len(p), nil
	}
	a.queue = append(a.queue, append([]byte(nil), p...))
	a.size += len(p)
	if a.idle == nil {
		a.idle = make(chan struct{})
		go a.run(a.idle)
	}
	a.mu.Unlock()
	return len(p), nil
}

// run writes the queue until it is empty.
func (a *Async) run(idle chan struct{}) {
	defer close(idle)
	for {
		a.mu.Lock()
		q, dropped := a.queue, a.dropped
		if len(q) == 0 && dropped == 0 {
			a.idle = nil
			a.mu.Unlock()
			return
		}
		// The batch counts against the bound until it is written, so
		// what the Async holds, queued or being written, stays within it.
		a.queue, a.dropped = nil, 0
		a.mu.Unlock()
		n := 0
		for _, b := range q {
			_, _ = a.w.Write(b)
			n += len(b)
		}
		if dropped > 0 {
			_, _ = fmt.Fprintf(a.w, "zot: %d log lines dropped: the log was not taking them fast enough\n", dropped)
		}
		a.mu.Lock()
		a.size -= n
		a.mu.Unlock()
	}
}

// Flush waits until what was written before it is written.
func (a *Async) Flush() {
	a.mu.Lock()
	idle := a.idle
	a.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

// Close writes what is queued and waits for it; later writes go to the
// writer at once.
func (a *Async) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.Flush()
	return nil
}
