package mcphost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"zot.dev/zot/internal/boundlog"
	"zot.dev/zot/internal/mcpclient"
)

// MaxMessage bounds one message a server writes: 16 MiB.
const MaxMessage = mcpclient.MaxMessage

// notificationRate and notificationBurst bound how fast a stdio server's
// notifications are read: zot uses few (progress, at most one a call
// every 50 ms); each costs a decoding and a dispatch.
const (
	notificationRate  = 200
	notificationBurst = 1000
)

// skippedShown bounds what is logged of one line that is skipped or
// breaks the protocol.
const skippedShown = 200

// lineTransport is the transport of a stdio server: one JSON-RPC message
// a line on its stdout, and on its stdin. It takes the place of the SDK's
// IOTransport to read the server's output as zot must:
//
//   - A line that cannot be JSON-RPC (its first character other than
//     white space is not { or [: a banner, a stray log line) is skipped
//     and logged; the lines logged are bounded (boundlog.Limiter), and a
//     server that floods such lines is read at a bounded rate.
//   - A message over max bytes is skipped whole, and the connection goes
//     on: when it is an answer (its id is read on the way), the call it
//     answers fails at once with an error that says so.
//   - Notifications are read at most at notificationRate a second past
//     a burst.
//   - A line that starts like JSON but is not a JSON-RPC message breaks
//     the protocol: it is logged, and the connection ends with an error
//     that quotes it (broken), so a start fails at once and a live
//     server counts as crashed for that reason.
type lineTransport struct {
	r   io.ReadCloser
	w   io.WriteCloser
	max int
	// log gets the notes about the server's output (nil: none); lines
	// bounds them and pace slows the reading of skipped lines.
	log   io.Writer
	lines *boundlog.Limiter
	pace  *boundlog.Bucket
	// notes slows the reading of notifications.
	notes *boundlog.Bucket
	// onBreak is called once, from the reading goroutine, when the
	// output broke the protocol.
	onBreak func(error)

	mu     sync.Mutex
	broken error
}

func newLineTransport(r io.ReadCloser, w io.WriteCloser, log io.Writer, onBreak func(error)) *lineTransport {
	t := &lineTransport{r: r, w: w, max: MaxMessage, log: log, onBreak: onBreak,
		pace:  boundlog.NewBucket(boundlog.DroppedRate, boundlog.DroppedRate),
		notes: boundlog.NewBucket(notificationRate, notificationBurst)}
	t.lines = boundlog.NewLimiter(boundlog.Lines, boundlog.Window, func(n int, w time.Duration) {
		t.note("%d more lines of its stdout that are not JSON-RPC were skipped in %s", n, w)
	})
	return t
}

// note writes one line to the log.
func (t *lineTransport) note(format string, args ...any) {
	if t.log != nil {
		fmt.Fprintf(t.log, "zot: "+format+"\n", args...)
	}
}

// brokenErr returns why the output broke the protocol, nil if it did not.
func (t *lineTransport) brokenErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.broken
}

// Connect starts reading the server's output and returns the connection.
// The transport is connected once.
func (t *lineTransport) Connect(context.Context) (*lineConn, error) {
	c := &lineConn{t: t, incoming: make(chan *mcpclient.Message), ended: make(chan struct{}), closed: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

// lineConn is the connection of a lineTransport. Its reading goroutine
// ends when the server's output ends or is closed (Close closes it).
type lineConn struct {
	t        *lineTransport
	incoming chan *mcpclient.Message
	ended    chan struct{} // closed when readLoop returns; err is set
	err      error
	queue    []*mcpclient.Message // the rest of a batch

	wmu       sync.Mutex
	closeOnce sync.Once
	closed    chan struct{}
}

// Read implements mcpclient.Conn.
func (c *lineConn) Read(ctx context.Context) (*mcpclient.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.ended:
		return nil, c.err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements mcpclient.Conn.
func (c *lineConn) Write(ctx context.Context, msg *mcpclient.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := mcpclient.Encode(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.t.w.Write(append(data, '\n'))
	return err
}

// Close implements mcpclient.Conn: it closes the server's stdin and
// stdout.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = errors.Join(c.t.w.Close(), c.t.r.Close())
	})
	return err
}

// deliver hands msgs to Read, in order; false once the connection is
// closed.
func (c *lineConn) deliver(msgs ...*mcpclient.Message) bool {
	for _, m := range msgs {
		select {
		case c.incoming <- m:
		case <-c.closed:
			return false
		}
	}
	return true
}

// readLoop reads the server's output line by line until it ends or
// breaks the protocol.
func (c *lineConn) readLoop() {
	err := c.readLines()
	if err == nil {
		err = io.EOF
	}
	c.err = err
	close(c.ended)
}

// readLines reads lines until the output ends (nil) or breaks the
// protocol (that error).
func (c *lineConn) readLines() error {
	t := c.t
	br := bufio.NewReaderSize(t.r, 64<<10)
	var (
		line    []byte    // the line being read, while it is kept whole
		skip    bool      // the line is skipped (not JSON-RPC)
		shown   []byte    // the start of a skipped line
		over    *idReader // the line is over max: read for its id
		started bool      // something other than white space came on this line
		n       int       // the number of the line
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(chunk) == 0 {
			if errors.Is(err, io.EOF) || isClosed(err) {
				return nil
			}
			return err
		}
		if !started {
			rest := bytes.TrimLeft(chunk, " \t\r\n")
			if len(rest) > 0 {
				started = true
				n++
				skip = rest[0] != '{' && rest[0] != '['
				shown = shown[:0]
			}
		}
		switch {
		case !started:
		case skip:
			if room := skippedShown - len(shown); room > 0 {
				shown = append(shown, chunk[:min(room, len(chunk))]...)
			}
		case over != nil:
			over.feed(chunk)
		case len(line)+len(chunk) > t.max+2: // a CR and LF beyond the message
			over = &idReader{}
			over.feed(line)
			over.feed(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		// The line is over (or the output ended in the middle of one).
		switch {
		case !started:
		case skip:
			if t.lines.Allow() {
				t.note("skipped a line of stdout that is not JSON-RPC: %s", bytes.TrimSpace(shown))
			}
			t.pace.Pace(1)
		case over != nil:
			if !c.tooLong(n, over) {
				return nil
			}
		default:
			msgs, derr := mcpclient.DecodeBatch(line)
			if derr != nil {
				return c.breaks(n, line, derr)
			}
			if !c.deliver(msgs...) {
				return nil
			}
			// Notifications are read at a bounded rate (past a burst):
			// zot uses few of them (progress, at most one a call every
			// 50 ms), and a server that sends them without end waits
			// instead of taking a core.
			for _, m := range msgs {
				if m.IsNotification() {
					t.notes.Pace(1)
				}
			}
		}
		if line != nil && cap(line) > 1<<20 {
			line = nil // let a large buffer go
		}
		line, started, skip, over = line[:0], false, false, nil
		if err != nil {
			return nil // the output ended without a last LF
		}
	}
}

// isClosed reports whether err is the read of a closed file.
func isClosed(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)
}

// breaks records that line n broke the protocol, logs it and returns the
// error the connection ends with.
func (c *lineConn) breaks(n int, line []byte, err error) error {
	shown := bytes.TrimSpace(line)
	cut := ""
	if len(shown) > skippedShown {
		shown, cut = shown[:skippedShown], "…"
	}
	berr := fmt.Errorf("line %d of its stdout is not a JSON-RPC message (%v): %s%s", n, err, shown, cut)
	c.t.note("%v; zot closed the connection", berr)
	c.t.mu.Lock()
	c.t.broken = berr
	c.t.mu.Unlock()
	if c.t.onBreak != nil {
		c.t.onBreak(berr)
	}
	return berr
}

// tooLong deals with message n, over the bound: the call it answers, when
// its id was read, fails with an error that says so. It reports whether
// the connection goes on.
func (c *lineConn) tooLong(n int, r *idReader) bool {
	msg := fmt.Sprintf("the server's answer is %d bytes, over the %d bytes (%d MiB) zot reads in one message; it was skipped", r.size, c.t.max, c.t.max>>20)
	id, ok := r.id()
	if !ok {
		c.t.note("skipped message %d of its stdout: %d bytes, over the %d zot reads in one message", n, r.size, c.t.max)
		return true
	}
	c.t.note("skipped message %d of its stdout, the answer to request %s: %d bytes, over the %d zot reads in one message; the call fails", n, r.idRaw, r.size, c.t.max)
	return c.deliver(&mcpclient.Message{ID: id, Error: &mcpclient.Error{Code: mcpclient.CodeInternalError, Message: msg}})
}

// idReader reads a JSON object as it comes, in pieces, keeping only its
// size and the value of its top-level "id" member (a string or a number),
// wherever that comes in the object.
type idReader struct {
	size int

	depth     int
	inStr     bool
	esc       bool
	wantKey   bool   // at depth 1, the next string is a member name
	isKey     bool   // the string being read is a member name at depth 1
	key       []byte // that name, up to a few bytes
	lastKey   string // the last name read at depth 1
	wantValue bool   // the value of "id" comes next
	inID      bool   // reading the value of "id"
	idStr     bool   // it is a string
	idRaw     []byte
	found     bool
}

// feed reads the next piece of the object.
func (r *idReader) feed(b []byte) {
	r.size += len(b)
	for _, ch := range b {
		if r.inID && !r.idStr {
			if ch >= '0' && ch <= '9' || ch == '-' || ch == '+' || ch == '.' || ch == 'e' || ch == 'E' {
				r.addID(ch)
				continue
			}
			r.inID, r.found = false, true
		}
		if r.inStr {
			if r.inID {
				r.addID(ch)
			}
			if r.isKey && len(r.key) < 8 {
				r.key = append(r.key, ch)
			}
			switch {
			case r.esc:
				r.esc = false
			case ch == '\\':
				r.esc = true
			case ch == '"':
				r.inStr = false
				if r.inID {
					r.inID, r.found = false, true
				}
				if r.isKey {
					r.isKey = false
					r.lastKey = string(bytes.TrimSuffix(r.key, []byte{'"'}))
				}
			}
			continue
		}
		switch ch {
		case '"':
			r.inStr = true
			switch {
			case r.depth == 1 && r.wantKey:
				r.isKey, r.wantKey, r.key = true, false, r.key[:0]
			case r.depth == 1 && r.wantValue:
				r.wantValue, r.inID, r.idStr = false, true, true
				r.addID(ch)
			}
		case ':':
			if r.depth == 1 {
				r.wantValue = r.lastKey == "id" && !r.found
				r.lastKey = ""
			}
		case '{', '[':
			r.depth++
			r.wantValue = false
			r.wantKey = r.depth == 1 && ch == '{'
		case '}', ']':
			r.depth--
		case ',':
			r.wantKey = r.depth == 1
		case ' ', '\t', '\r', '\n':
		default:
			if r.depth == 1 && r.wantValue && (ch >= '0' && ch <= '9' || ch == '-') {
				r.wantValue, r.inID, r.idStr = false, true, false
				r.addID(ch)
			} else {
				r.wantValue = false
			}
		}
	}
}

func (r *idReader) addID(ch byte) {
	if len(r.idRaw) < 256 {
		r.idRaw = append(r.idRaw, ch)
	}
}

// id returns the id read, if there was one.
func (r *idReader) id() (json.RawMessage, bool) {
	if !r.found && !(r.inID && !r.idStr) {
		return nil, false
	}
	if !mcpclient.ValidID(r.idRaw) {
		return nil, false
	}
	return json.RawMessage(r.idRaw), true
}
