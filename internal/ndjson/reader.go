package ndjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the line length limit of a [Reader] made with a
// limit of 0.
const DefaultMaxLine = 64 << 20

// firstSize is the size of a Reader's buffer until a line needs more.
// Most lines are short, and a process holds a Reader for each input it
// reads lines from (stdin, each extension's stdout), idle most of the
// time: their buffers are resident for as long as they live. 4 KiB is
// also a size the runtime already allocates for (net/http's and bufio's
// default buffers), so it adds no size class.
const firstSize = 4 << 10

// readSize is the most one read asks for once the buffer has grown for
// a long line.
const readSize = 64 << 10

// maxEmptyReads is how many reads in a row may return nothing before
// the underlying reader counts as broken (as in bufio).
const maxEmptyReads = 100

// Reader splits input into lines on LF only (never on U+2028 or a CR
// alone) and drops one CR before the LF. Lines longer than its limit are
// skipped up to their LF and reported as [ErrLineTooLong], and reading
// goes on. A Reader is not safe for concurrent use.
//
// A line is returned where it was read, in the Reader's own buffer,
// which grows by doubling while a line does not fit (up to the limit and
// its line ending, never past): a line of n bytes costs about 2n bytes of
// allocation in all and, while the buffer grows for the last time, 1.5n
// at once. A buffer grown past 1 MiB is let go at the next call.
//
// Next blocks in the underlying reader and takes no context: to stop a
// blocked Next, close the underlying reader.
type Reader struct {
	r     io.Reader
	limit int
	buf   []byte // all of it usable: len(buf) is its capacity
	start int    // buf[start:end] has been read and not yet returned
	end   int
	err   error // from the underlying reader, returned once buf is used up
}

// NewReader returns a Reader of r that accepts lines of up to limit bytes
// (not counting the line ending); limit <= 0 means [DefaultMaxLine].
func NewReader(r io.Reader, limit int) *Reader {
	return newReaderSize(r, limit, firstSize)
}

// newReaderSize is NewReader with a first buffer of size bytes.
func newReaderSize(r io.Reader, limit, size int) *Reader {
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	return &Reader{r: r, limit: limit, buf: make([]byte, size)}
}

// Next returns the next line without its LF (and without a CR before
// it). The slice is valid until the next call. A line over the limit
// yields an error matching [ErrLineTooLong]; calling Next again reads on.
// At the end of input Next returns io.EOF, after a last line without LF
// has been returned. Other errors come from the underlying reader.
func (lr *Reader) Next() ([]byte, error) {
	lr.release()
	scanned := lr.start // buf[start:scanned] holds no LF
	tooLong := false
	for {
		if i := bytes.IndexByte(lr.buf[scanned:lr.end], '\n'); i >= 0 {
			line := lr.buf[lr.start : scanned+i]
			lr.start = scanned + i + 1
			if tooLong {
				return nil, lr.tooLong()
			}
			return lr.checked(bytes.TrimSuffix(line, []byte("\r")))
		}
		// The longest line that can still be within the limit is limit
		// bytes and a CR, before its LF; anything longer is dropped as it
		// comes, and only its end is looked for.
		if tooLong || lr.end-lr.start > lr.limit+1 {
			tooLong = true
			lr.start, lr.end = 0, 0
			if len(lr.buf) > maxKeep {
				lr.buf = make([]byte, firstSize)
			}
		}
		scanned = lr.end
		if lr.err != nil {
			return lr.last(tooLong)
		}
		scanned -= lr.start
		lr.fill()
	}
}

// last ends the input: it returns the line without LF that is left, the
// report of a line that was too long, or the reader's error.
func (lr *Reader) last(tooLong bool) ([]byte, error) {
	if tooLong {
		return nil, lr.tooLong()
	}
	if !errors.Is(lr.err, io.EOF) {
		lr.start, lr.end = 0, 0 // a line cut by a failure is not returned
		return nil, fmt.Errorf("reading line: %w", lr.err)
	}
	if lr.end > lr.start {
		line := lr.buf[lr.start:lr.end]
		lr.start = lr.end
		return lr.checked(bytes.TrimSuffix(line, []byte("\r")))
	}
	return nil, io.EOF
}

// fill moves the unreturned bytes to the front of the buffer, grows it
// when they fill it, and reads once into the room left.
func (lr *Reader) fill() {
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		lr.grow()
	}
	// Reads stop readSize past what is held, so that little is read
	// ahead of a line: what is, outlives the line's buffer (release).
	room := lr.buf[lr.end:min(len(lr.buf), lr.end+readSize)]
	for range maxEmptyReads {
		n, err := lr.r.Read(room)
		lr.end += n
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	lr.err = io.ErrNoProgress
}

// grow doubles the buffer, but makes it as large as the longest line and
// its ending at once when the next doubling would pass that anyway, so
// the last and largest copy is not made twice.
func (lr *Reader) grow() {
	most := lr.limit + 2 // a line of limit bytes, CR, LF
	size := min(2*len(lr.buf), most)
	if 2*size > most {
		size = most
	}
	buf := make([]byte, size)
	copy(buf, lr.buf[:lr.end])
	lr.buf = buf
}

// Release lets go now, rather than at the next call to Next, of a buffer
// grown past 1 MiB for a long line, so that the memory can be reclaimed
// while the caller works on what it decoded from the line. The line Next
// returned last is left as it is (the buffer is dropped, not reused).
func (lr *Reader) Release() { lr.release() }

// Detach is Release, and reports whether the line Next returned last is
// now the caller's to keep: its buffer (grown past 1 MiB for it) was let
// go and will never be reused, so the line, and slices of it, stay as
// they are without a copy.
func (lr *Reader) Detach() bool {
	if len(lr.buf) <= maxKeep {
		return false
	}
	lr.release()
	return true
}

// release lets go of a buffer grown past maxKeep for a big line, keeping
// the bytes read after that line in a buffer of the usual size.
func (lr *Reader) release() {
	if len(lr.buf) <= maxKeep {
		return
	}
	rest := lr.buf[lr.start:lr.end]
	buf := make([]byte, max(firstSize, len(rest)))
	lr.end = copy(buf, rest)
	lr.start = 0
	lr.buf = buf
}

// checked returns line, or ErrLineTooLong when it is over the limit.
func (lr *Reader) checked(line []byte) ([]byte, error) {
	if len(line) > lr.limit {
		return nil, lr.tooLong()
	}
	return line, nil
}

func (lr *Reader) tooLong() error {
	return fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, lr.limit)
}
