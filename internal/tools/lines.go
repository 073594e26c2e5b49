package tools

import (
	"bufio"
	"context"
	"errors"
	"io"
	"unicode/utf8"
)

// lineReader reads a text stream line by line without a ceiling on line
// length: it keeps at most keepBytes of each line and counts the rest.
type lineReader struct {
	br        *bufio.Reader
	keepBytes int
	buf       []byte
}

// line is one line read by lineReader.
type line struct {
	// text is the line's first bytes (at most keepBytes), without the line
	// ending.
	text []byte
	// size is the full length of the line in bytes, line ending excluded.
	size int
}

// next returns the next line, or io.EOF when the stream has ended. A final
// line without a newline is returned as a line. The ending ("\n" or
// "\r\n") is not part of the line. On another error it returns the part
// of the line read so far, which may be empty, with the error.
func (r *lineReader) next() (line, error) {
	r.buf = r.buf[:0]
	size := 0
	var prevLast byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		size += len(chunk)
		if room := r.keepBytes - len(r.buf); room > 0 {
			r.buf = append(r.buf, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case err == nil:
			before := prevLast
			if len(chunk) >= 2 {
				before = chunk[len(chunk)-2]
			}
			size--
			if before == '\r' && size > 0 {
				size--
			}
			return line{text: r.buf[:min(len(r.buf), size)], size: size}, nil
		case errors.Is(err, bufio.ErrBufferFull):
			prevLast = chunk[len(chunk)-1]
		case errors.Is(err, io.EOF):
			if size == 0 {
				return line{}, io.EOF
			}
			return line{text: r.buf, size: size}, nil
		default:
			return line{text: r.buf, size: size}, err
		}
	}
}

// skip discards n lines. It returns how many were discarded (fewer at end
// of stream) and checks ctx as it goes.
func (r *lineReader) skip(ctx context.Context, n int) (int, error) {
	done := 0
	partial := false
	for i := 0; done < n; i++ {
		if i%256 == 0 && ctx.Err() != nil {
			return done, ctx.Err()
		}
		chunk, err := r.br.ReadSlice('\n')
		if len(chunk) > 0 {
			partial = true
		}
		switch {
		case err == nil:
			done++
			partial = false
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if partial {
				done++
			}
			return done, nil
		default:
			return done, err
		}
	}
	return done, nil
}

// count counts the lines left in the stream.
func (r *lineReader) count(ctx context.Context) (int, error) {
	return r.skip(ctx, int(^uint(0)>>1))
}

// truncateRunes cuts b to at most n runes. It reports whether it cut.
func truncateRunes(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return b, false // every rune takes at least a byte
	}
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(b) {
			return b, false
		}
		_, w := utf8.DecodeRune(b[i:])
		i += w
	}
	return b[:i], i < len(b)
}
