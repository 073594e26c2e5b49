package ndjson

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the line length limit of a [Reader] made with a
// limit of 0.
const DefaultMaxLine = 64 << 20

// Reader splits input into lines on LF only (never on U+2028 or a CR
// alone) and drops one CR before the LF. Lines longer than its limit are
// skipped up to their LF and reported as [ErrLineTooLong], and reading
// goes on. A Reader is not safe for concurrent use.
//
// Next blocks in the underlying reader and takes no context: to stop a
// blocked Next, close the underlying reader.
type Reader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
}

// NewReader returns a Reader of r that accepts lines of up to limit bytes
// (not counting the line ending); limit <= 0 means [DefaultMaxLine].
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 {
		limit = DefaultMaxLine
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// Next returns the next line without its LF (and without a CR before
// it). The slice is valid until the next call. A line over the limit
// yields an error matching [ErrLineTooLong]; calling Next again reads on.
// At the end of input Next returns io.EOF, after a last line without LF
// has been returned. Other errors come from the underlying reader.
func (lr *Reader) Next() ([]byte, error) {
	if cap(lr.buf) > maxKeep {
		lr.buf = nil // the last line was big: do not keep its memory
	}
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		// The longest line that can still be within the limit is limit
		// bytes followed by CR LF; anything longer is dropped as it comes.
		if !tooLong && len(lr.buf)+len(chunk) > lr.limit+2 {
			tooLong = true
			lr.buf = lr.buf[:0]
			if cap(lr.buf) > maxKeep {
				lr.buf = nil
			}
		}
		if !tooLong {
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, lr.tooLong()
			}
			line := bytes.TrimSuffix(lr.buf, []byte("\n"))
			return lr.checked(bytes.TrimSuffix(line, []byte("\r")))
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, lr.tooLong()
			}
			if len(lr.buf) > 0 {
				return lr.checked(bytes.TrimSuffix(lr.buf, []byte("\r")))
			}
			return nil, io.EOF
		default:
			return nil, fmt.Errorf("reading line: %w", err)
		}
	}
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
