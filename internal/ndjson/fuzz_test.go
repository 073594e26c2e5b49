package ndjson

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// tooLong stands for a line reported as ErrLineTooLong in the lists of
// lines the fuzzer compares; no real line can hold it, since lines never
// hold an LF.
const tooLong = "\n<too long>"

// splitRef is what a Reader must make of in with limit, by the rules of
// its doc written out plainly: lines end at LF only; one CR before the
// LF, or at the end of the input, is dropped; a line longer than limit is
// reported as too long; a last line without LF counts unless it is empty.
func splitRef(in []byte, limit int) []string {
	var out []string
	for len(in) > 0 {
		line, rest, found := bytes.Cut(in, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > limit {
			out = append(out, tooLong)
		} else {
			out = append(out, string(line))
		}
		if !found {
			break
		}
		in = rest
	}
	return out
}

// chunked returns its data in reads of at most n bytes, so lines, CRs
// and LFs fall across reads.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// FuzzReader holds the Reader to splitRef for any input, line limit,
// size of the underlying reads and size of the first buffer (1 to 24
// bytes, so that lines span it and it grows, and the limit falls inside
// and across it).
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"", "\n", "a", "a\n", "a\r", "a\r\r\n", "a\nb", "\r\n\r\n",
		"a\r\n" + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nb\u2028c\n\nd\re\n\r\nlast",
		"oooooooo\r\nvvvvvvvvv\r\nend\r", "{\"type\":\"ping\"}\n{\"type\":\"prompt\",\"message\":\"hi\"}\r\n",
	} {
		f.Add([]byte(s), uint8(8), uint8(0), uint8(15))
		f.Add([]byte(s), uint8(1), uint8(1), uint8(0))
		f.Add([]byte(s), uint8(20), uint8(3), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit, chunk, size uint8) {
		lim := int(limit)%48 + 1
		var src io.Reader = bytes.NewReader(in)
		if chunk > 0 {
			src = &chunked{data: in, n: int(chunk)%20 + 1}
		}
		lr := newReaderSize(src, lim, 1+int(size)%24)
		var got []string
		for range len(in) + 2 { // a line per byte at most, then EOF
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			switch {
			case errors.Is(err, ErrLineTooLong):
				got = append(got, tooLong)
			case err != nil:
				t.Fatalf("after %q: %v", got, err)
			case len(line) > lim:
				t.Fatalf("line of %d bytes passed the limit of %d", len(line), lim)
			default:
				got = append(got, string(line))
			}
		}
		want := splitRef(in, lim)
		if len(got) != len(want) {
			t.Fatalf("limit %d, input %q:\ngot  %q\nwant %q", lim, in, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("limit %d, input %q: line %d is %q, want %q", lim, in, i, got[i], want[i])
			}
		}
		if _, err := lr.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the end: %v, want io.EOF", err)
		}
	})
}
