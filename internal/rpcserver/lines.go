package rpcserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// errLineTooLong is returned by lineReader.next for a line over the limit;
// the rest of that line has been skipped.
var errLineTooLong = errors.New("line too long")

// lineReader splits input on LF only (never on U+2028 or CR alone), with a
// bound on line length that it survives: an oversize line is skipped up
// to its newline and reported, and reading goes on.
type lineReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next returns the next line without its LF (and without a CR before it).
// The slice is valid until the next call. At the end of input it returns
// io.EOF; a last line without LF is returned first.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.limit+2 || (len(lr.buf)+len(chunk) > lr.limit && !bytes.HasSuffix(chunk, []byte("\n"))) {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			line := bytes.TrimSuffix(lr.buf, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) > lr.limit {
				return nil, errLineTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, errLineTooLong
			}
			if len(lr.buf) > 0 {
				line := bytes.TrimSuffix(lr.buf, []byte("\r"))
				return line, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}
