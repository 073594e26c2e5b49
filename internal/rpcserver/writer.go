package rpcserver

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// frame is one line to write: an event or a response.
type frame struct {
	ev   wire.Event
	resp *wire.Response
	// flushed, when set, is closed once the frame is on the output.
	flushed chan struct{}
}

// writer owns the output. One goroutine encodes frames in the order they
// were queued and flushes whenever no frame is waiting, so a burst of
// events costs one write and a lone response is written at once.
type writer struct {
	out     *bufio.Writer
	frames  chan frame
	scratch []byte
	log     io.Writer // where broken frames are reported
	// validate checks every frame against the schema before it is
	// written, reporting a broken one to log (a debugging aid).
	validate bool
	done     chan struct{}
	mu       sync.Mutex
	closed   bool
	err      error // the first write error; later frames are dropped
}

func newWriter(w io.Writer, log io.Writer, validate bool) *writer {
	return &writer{
		validate: validate,
		out:      bufio.NewWriterSize(w, 64<<10),
		frames:   make(chan frame, 1024),
		log:      log,
		done:     make(chan struct{}),
	}
}

// run writes frames until close is called and the queue is empty.
func (w *writer) run() {
	defer close(w.done)
	for f := range w.frames {
		w.write(f)
		if len(w.frames) == 0 {
			// Give a producer that is mid-burst one chance to add its
			// next frame, so a burst costs one write, not one per line.
			runtime.Gosched()
		}
		if len(w.frames) == 0 {
			w.flush()
		}
		if f.flushed != nil {
			w.flush()
			close(f.flushed)
		}
	}
	w.flush()
}

func (w *writer) write(f frame) {
	if w.err != nil {
		return
	}
	b := w.scratch[:0]
	if f.ev != nil {
		b = f.ev.AppendJSON(b)
	} else {
		b = f.resp.AppendJSON(b)
	}
	if w.validate {
		if err := wire.ValidateFrame(b); err != nil {
			fmt.Fprintf(w.log, "zot: outbound frame breaks the schema: %v: %s\n", err, b)
		}
	}
	b = append(b, '\n')
	if _, err := w.out.Write(b); err != nil {
		w.err = err
	}
	if cap(b) <= 1<<20 {
		w.scratch = b
	} else {
		w.scratch = nil
	}
}

func (w *writer) flush() {
	if w.err == nil {
		if err := w.out.Flush(); err != nil {
			w.err = err
		}
	}
}

// send queues a frame; frames sent after close are dropped.
func (w *writer) send(f frame) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		if f.flushed != nil {
			close(f.flushed)
		}
		return
	}
	w.frames <- f
}

// sendSync queues a frame and waits until it is written and flushed.
func (w *writer) sendSync(f frame) {
	f.flushed = make(chan struct{})
	w.send(f)
	<-f.flushed
}

// close stops accepting frames and waits until every queued frame is
// written and flushed.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.frames)
	}
	w.mu.Unlock()
	<-w.done
}
