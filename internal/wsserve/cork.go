package wsserve

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// corkBytes is how much a corked connection holds before it writes: a
// batch larger than this goes out in pieces of about this size.
const corkBytes = 64 << 10

// corkConn is the connection under a WebSocket, which holds what is
// written while corked and writes it at once when uncorked: the frames
// of a batch of messages (each its own WebSocket message, framed by the
// library) leave in one system call instead of one each, as the Unix
// socket's lines do.
type corkConn struct {
	net.Conn

	mu     sync.Mutex
	corked bool
	buf    []byte
	// progress is called after each piece written while corked (the
	// batch's Progress); nil outside a batch.
	progress func()
}

// Write writes p, or holds it while corked.
func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) >= corkBytes {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		if c.progress != nil {
			c.progress()
		}
	}
	return len(p), nil
}

// cork holds what is written from now on; progress is told of each piece
// written before uncork.
func (c *corkConn) cork(progress func()) {
	c.mu.Lock()
	c.corked, c.progress = true, progress
	c.mu.Unlock()
}

// uncork writes what was held, and writes through again.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked, c.progress = false, nil
	err := c.flushLocked()
	if cap(c.buf) > 4*corkBytes {
		c.buf = nil // a huge batch's buffer is not kept
	}
	return err
}

// flushLocked writes what is held; c.mu is held (a concurrent control
// frame waits for it, as it would for the socket).
func (c *corkConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// corkingWriter is the http.ResponseWriter handed to websocket.Accept:
// its Hijack gives the library a corkConn (and a writer onto it), kept in
// conn for the transport.
type corkingWriter struct {
	http.ResponseWriter
	conn *corkConn
}

// Hijack takes the connection from the server and wraps it.
func (w *corkingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if n := brw.Writer.Buffered(); n > 0 {
		// What the server had not written yet (the 101 answer) goes out
		// first.
		if err := brw.Writer.Flush(); err != nil {
			_ = nc.Close()
			return nil, nil, err
		}
	}
	w.conn = &corkConn{Conn: nc}
	return w.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.conn, 4096)), nil
}
