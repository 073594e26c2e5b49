package reqbody

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// Buffers keeps the buffer of a body that has been sent for the next body
// to be built in. A session's bodies are tens of kilobytes each (the tool
// list alone is most of a short one) and one is built per model call: a
// new buffer for each was most of what a tool round trip allocated, and
// so most of what the collector had to sweep. It is safe for concurrent
// use; calls that overlap get buffers of their own. The zero value is
// ready.
type Buffers struct {
	mu    sync.Mutex
	spare []byte
}

// Payload is [Body] built in a buffer of b's when one is large enough,
// with the texts of s (nil: none) put in at their places ([NewPayload]).
// With a b that is not nil the payload is recycled ([Payload.Recycle]):
// its buffer comes back to b once it has been sent and released.
func (b *Buffers) Payload(head []byte, member string, size int, appendList func([]byte) []byte, tools []byte, s *Splices) *Payload {
	p := NewPayload(body(b.take(bodySize(head, member, size, tools)), head, member, appendList, tools), s)
	if b != nil {
		p.Recycle(b)
	}
	return p
}

// take returns an empty buffer of at least n bytes of capacity. A new one
// has room to spare: a session's next body is its last one and a message
// or two more, and should fit in the same buffer.
func (b *Buffers) take(n int) []byte {
	if b == nil {
		return make([]byte, 0, n)
	}
	b.mu.Lock()
	spare := b.spare
	if cap(spare) >= n {
		b.spare = nil
		b.mu.Unlock()
		return spare[:0]
	}
	b.mu.Unlock()
	return make([]byte, 0, n+n/4+bodyGrowth)
}

// bodyGrowth is the least room a new body buffer has beyond its body.
const bodyGrowth = 16 << 10

// give keeps buf for the next body, unless a larger one is kept.
func (b *Buffers) give(buf []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cap(buf) > cap(b.spare) {
		b.spare = buf
	}
}

// errReadClosed is what a body's reader returns once it is closed.
var errReadClosed = errors.New("reqbody: read of a closed body")

// Recycle makes p give its bytes back to bufs once the caller has called
// Release and every reader Reader returned has been closed: the HTTP
// transport closes a request's body when it is done with it. A reader
// never closed keeps the bytes from coming back, which costs only their
// reuse. Call Recycle before the first Reader; after Release, p's bytes
// (Bytes) must not be used.
func (p *Payload) Recycle(bufs *Buffers) {
	p.bufs = bufs
	p.refs.Store(1)
}

// Release says the caller is done with p (see Recycle). It does nothing
// for a payload that is not recycled.
func (p *Payload) Release() {
	if p.bufs != nil {
		p.unref()
	}
}

func (p *Payload) unref() {
	if p.refs.Add(-1) == 0 {
		p.bufs.give(p.raw)
	}
}

// closingReader is a reader of a recycled payload. Once it is closed it
// no longer reads the payload's bytes; a read under way when Close is
// called gives up the reader's hold on them as it ends, so Close never
// waits for a read (a write to a stalled connection, say).
type closingReader struct {
	p *Payload
	r io.Reader

	mu       sync.Mutex
	busy     bool // a Read or WriteTo is under way
	closed   bool
	released bool // the hold on p is given up
}

// begin starts a read; it reports false once the reader is closed.
func (c *closingReader) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.busy = true
	return true
}

// end ends a read, giving up the hold on p if Close came meanwhile.
func (c *closingReader) end() {
	c.mu.Lock()
	c.busy = false
	release := c.closed && !c.released
	c.released = c.released || release
	c.mu.Unlock()
	if release {
		c.p.unref()
	}
}

func (c *closingReader) Read(b []byte) (int, error) {
	if !c.begin() {
		return 0, errReadClosed
	}
	defer c.end()
	return c.r.Read(b)
}

// WriteTo writes the rest of the body to w, in one write when it has no
// texts encoded as it is read.
func (c *closingReader) WriteTo(w io.Writer) (int64, error) {
	if !c.begin() {
		return 0, errReadClosed
	}
	defer c.end()
	if br, ok := c.r.(*bytes.Reader); ok {
		return br.WriteTo(w)
	}
	return io.Copy(onlyWriter{w}, c.r)
}

// onlyWriter hides a writer's ReadFrom, so that io.Copy in WriteTo reads
// from the payload's reader itself.
type onlyWriter struct{ io.Writer }

// Close gives up the reader's hold on the payload's bytes, at once or,
// when a read is under way, as that read ends.
func (c *closingReader) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	release := !c.busy
	c.released = release
	c.mu.Unlock()
	if release {
		c.p.unref()
	}
	return nil
}

// refcount of a recycled payload: see Recycle.
type recycling struct {
	bufs *Buffers
	refs atomic.Int32
}
