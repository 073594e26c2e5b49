package httpcall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"zot.dev/zot/internal/llm"
)

// readBufferSize is the bufio buffer of a Stream. Lines longer than this
// are assembled in a growing buffer, so any length works.
const readBufferSize = 64 << 10

// readers keeps the read buffers of finished streams for the next ones, so
// that a session's model calls do not allocate one each.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// errFinished is what Next returns once the stream's buffer went back.
var errFinished = errors.New("stream already finished")

// Event is one Server-Sent Event.
type Event struct {
	// Name is the event type: the last `event:` field, or "message" when
	// the event had none (as the SSE specification says).
	Name string
	// Data is the `data:` fields joined with "\n". It is valid only until
	// the next call to Next.
	Data []byte
}

// Stream reads Server-Sent Events from a response body, following the
// WHATWG specification: `event:` and `data:` fields (several data lines are
// joined with "\n"), comments ignored, CRLF, LF or CR line ends, `id` and
// `retry` ignored, a leading byte order mark stripped, and an unterminated
// last event discarded. It is not safe for concurrent use, except that Close
// may be called from any goroutine.
type Stream struct {
	provider string
	ctx      context.Context    // the caller's context
	cancel   context.CancelFunc // cancels the request
	body     io.ReadCloser
	r        *bufio.Reader
	idle     time.Duration

	// base is the monotonic origin of waitingSince.
	base time.Time
	// waitingSince is 1 + the offset from base at which the current body
	// Read began, or 0 while no Read is in progress.
	waitingSince atomic.Int64
	timedOut     atomic.Bool

	mu     sync.Mutex // guards timer and closed
	timer  *time.Timer
	closed bool

	sawLine  bool // the first line (which may start with a BOM) was read
	skipLF   bool // the previous line ended in CR; a following LF belongs to it
	line     []byte
	data     []byte
	name     []byte
	lastName string
	err      error // sticky error of Next
}

// newStream wraps body; cancel aborts the request behind it. An idle of 0
// disables the idle timeout.
func newStream(ctx context.Context, cancel context.CancelFunc, provider string, body io.ReadCloser, idle time.Duration) *Stream {
	s := &Stream{
		provider: provider,
		ctx:      ctx,
		cancel:   cancel,
		body:     body,
		idle:     idle,
		base:     time.Now(),
	}
	s.r = readers.Get().(*bufio.Reader)
	s.r.Reset(idleReader{s})
	if idle > 0 {
		s.mu.Lock()
		s.timer = time.AfterFunc(idle, s.onTimer)
		s.mu.Unlock()
	}
	return s
}

// Next returns the next event. It returns io.EOF at the clean end of the
// body, an *llm.Error with Kind "idle_timeout" when no byte arrived for the
// idle timeout, an error wrapping ctx's error after cancellation, and an
// *llm.Error with Kind "stream_cut" when reading the body failed otherwise.
// Once it has returned an error it keeps returning it.
func (s *Stream) Next() (Event, error) {
	if s.err != nil {
		return Event{}, s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = fmt.Errorf("%s: reading stream: %w", s.provider, err)
		return Event{}, s.err
	}
	s.data = s.data[:0]
	s.name = s.name[:0]
	for {
		line, err := s.readLine()
		if err != nil {
			s.err = s.readError(err)
			return Event{}, s.err
		}
		if len(line) == 0 {
			if len(s.data) == 0 {
				s.name = s.name[:0]
				continue
			}
			return Event{Name: s.eventName(), Data: s.data[:len(s.data)-1]}, nil
		}
		s.field(line)
	}
}

// Close stops the idle timer, cancels the request and closes the body. It
// may be called more than once and from any goroutine.
func (s *Stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	s.cancel()
	if err := s.body.Close(); err != nil {
		return fmt.Errorf("%s: closing stream: %w", s.provider, err)
	}
	return nil
}

// Draining a finished stream: see finish.
const (
	drainWait  = 5 * time.Millisecond
	drainLimit = 64 << 10
)

// finish closes s and gives its read buffer back for another stream. Only
// the goroutine that reads s may call it, once it is done with Next; Next
// then returns an error.
//
// When the caller read the stream to its end marker (ended), finish first
// reads what is left of the body, so that the connection goes back to the
// pool for the next call instead of being closed: a server that is done
// ends the body (a chunked response's last chunk) right after its end
// marker, in microseconds. A server that keeps the body open, or sends
// more than drainLimit bytes, is cut after drainWait.
func (s *Stream) finish(ended bool) error {
	if ended && s.r != nil && s.err == nil {
		cut := time.AfterFunc(drainWait, s.cancel)
		_, _ = io.CopyN(io.Discard, s.r, drainLimit)
		cut.Stop()
	}
	err := s.Close()
	if s.r != nil {
		s.r.Reset(nil)
		readers.Put(s.r)
		s.r = nil
	}
	s.err = fmt.Errorf("%s: %w", s.provider, errFinished)
	return err
}

// field applies one non-empty line to the event being built.
func (s *Stream) field(line []byte) {
	if line[0] == ':' {
		return
	}
	name, value := line, line[len(line):]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
	case "event":
		s.name = append(s.name[:0], value...)
	}
}

// eventName returns the event type as a string, reusing the previous string
// when the name repeats so that steady streams do not allocate.
func (s *Stream) eventName() string {
	if len(s.name) == 0 {
		return "message"
	}
	if string(s.name) != s.lastName {
		s.lastName = string(s.name)
	}
	return s.lastName
}

// readLine returns the next line without its end. The result aliases an
// internal buffer and is valid until the next read.
func (s *Stream) readLine() ([]byte, error) {
	if s.skipLF {
		b, err := s.r.Peek(1)
		if err != nil {
			return nil, err
		}
		if b[0] == '\n' {
			s.r.Discard(1)
		}
		s.skipLF = false
	}
	s.line = s.line[:0]
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return nil, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		end := bytes.IndexByte(buf, '\n')
		scan := buf
		if end >= 0 {
			scan = buf[:end]
		}
		if cr := bytes.IndexByte(scan, '\r'); cr >= 0 {
			end = cr
			s.skipLF = true
		}
		if end < 0 {
			s.line = append(s.line, buf...)
			s.r.Discard(len(buf))
			continue
		}
		line := buf[:end]
		if len(s.line) > 0 {
			s.line = append(s.line, line...)
			line = s.line
		}
		s.r.Discard(end + 1)
		if !s.sawLine {
			s.sawLine = true
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		return line, nil
	}
}

// readError turns a failed read into the error Next reports.
func (s *Stream) readError(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	if cerr := s.ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: reading stream: %w", s.provider, cerr)
	}
	if s.timedOut.Load() {
		return &llm.Error{
			Provider:  s.provider,
			Kind:      "idle_timeout",
			Message:   fmt.Sprintf("no data received for %s", s.idle),
			Retryable: true,
			Err:       err,
		}
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("%s: reading stream: stream closed: %w", s.provider, err)
	}
	return &llm.Error{
		Provider:  s.provider,
		Kind:      "stream_cut",
		Message:   "reading stream: " + err.Error(),
		Retryable: true,
		Err:       err,
	}
}

// onTimer runs when the idle timer fires. It cancels the request when a
// body Read has been waiting for the whole idle timeout, and otherwise
// re-arms the timer for the rest of the period.
func (s *Stream) onTimer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	next := s.idle
	if since := s.waitingSince.Load(); since != 0 {
		waited := time.Since(s.base) - time.Duration(since-1)
		if waited >= s.idle {
			s.timedOut.Store(true)
			s.cancel()
			return
		}
		next = s.idle - waited
	}
	s.timer.Reset(next)
}

// idleReader records when each body Read starts and ends, so that only
// time spent waiting on the network counts towards the idle timeout (a
// slow consumer does not).
type idleReader struct{ s *Stream }

func (r idleReader) Read(p []byte) (int, error) {
	r.s.waitingSince.Store(int64(time.Since(r.s.base)) + 1)
	n, err := r.s.body.Read(p)
	r.s.waitingSince.Store(0)
	return n, err
}
