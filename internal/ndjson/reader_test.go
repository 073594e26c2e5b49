package ndjson

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads lines until EOF, writing a line over the limit as
// "<too long>".
func readAll(t *testing.T, lr *Reader) []string {
	t.Helper()
	var got []string
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return got
		case errors.Is(err, ErrLineTooLong):
			got = append(got, "<too long>")
		case err != nil:
			t.Fatalf("after %q: %v", got, err)
		default:
			got = append(got, string(line))
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReader(t *testing.T) {
	in := "a\r\n" + strings.Repeat("x", 100) + "\nb\u2028c\n\n" + strings.Repeat("y", 50) + "\nd\re\n\r\nlast"
	got := readAll(t, NewReader(strings.NewReader(in), 60))
	want := []string{"a", "<too long>", "b\u2028c", "", strings.Repeat("y", 50), "d\re", "", "last"}
	if !equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestReaderEnds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\r", []string{"a"}},
		{"a\r\r\n", []string{"a\r"}},
		{"a\nb", []string{"a", "b"}},
	} {
		got := readAll(t, NewReader(strings.NewReader(c.in), 10))
		if !equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestReaderLimit checks the bound at its edges: limit bytes pass with
// any line ending, one more does not.
func TestReaderLimit(t *testing.T) {
	const limit = 8
	ok, over := strings.Repeat("o", limit), strings.Repeat("v", limit+1)
	for _, c := range []struct {
		in   string
		want []string
	}{
		{ok + "\n", []string{ok}},
		{ok + "\r\n", []string{ok}},
		{ok, []string{ok}},
		{ok + "\r", []string{ok}},
		{over + "\n", []string{"<too long>"}},
		{over + "\r\n", []string{"<too long>"}},
		{over, []string{"<too long>"}},
		{over + "\r", []string{"<too long>"}},
		{over + "xx\nok", []string{"<too long>", "ok"}},
		{over + "xx\r\nok\r\n", []string{"<too long>", "ok"}},
	} {
		got := readAll(t, NewReader(strings.NewReader(c.in), limit))
		if !equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestReaderOneByteReads splits the input into one-byte reads, so a CR
// and its LF arrive in different reads.
func TestReaderOneByteReads(t *testing.T) {
	in := strings.Repeat("z", 8) + "\r\n" + strings.Repeat("w", 9) + "\r\nend\r"
	got := readAll(t, NewReader(iotest.OneByteReader(strings.NewReader(in)), 8))
	want := []string{strings.Repeat("z", 8), "<too long>", "end"}
	if !equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestReaderLongLineAcrossBuffers(t *testing.T) {
	big := strings.Repeat("z", 200<<10) // larger than the 64 KiB read buffer
	lr := NewReader(strings.NewReader(big+"\nok\n"+big+"\r\n"), 300<<10)
	for _, w := range []string{big, "ok", big} {
		line, err := lr.Next()
		if err != nil || string(line) != w {
			t.Fatalf("got %d bytes, %v; want %d", len(line), err, len(w))
		}
	}
	lr = NewReader(strings.NewReader(big+"\nok\n"+big), 100<<10)
	got := readAll(t, lr)
	if want := []string{"<too long>", "ok", "<too long>"}; !equal(got, want) {
		t.Fatalf("got %d lines, want %q", len(got), want)
	}
}

// TestReaderReleasesBigBuffers checks that a big line, accepted or
// skipped, does not pin its memory for the rest of the stream.
func TestReaderReleasesBigBuffers(t *testing.T) {
	big := strings.Repeat("b", 3<<20)
	lr := NewReader(strings.NewReader(big+"\nsmall\n"+big+big+"\nsmall\n"), 4<<20)
	if line, err := lr.Next(); err != nil || len(line) != len(big) {
		t.Fatalf("got %d bytes, %v", len(line), err)
	}
	if line, err := lr.Next(); err != nil || string(line) != "small" {
		t.Fatalf("got %q, %v", line, err)
	}
	if cap(lr.buf) > maxKeep {
		t.Fatalf("after a big line, the buffer keeps %d bytes", cap(lr.buf))
	}
	if _, err := lr.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("want too long, got %v", err)
	}
	if cap(lr.buf) > maxKeep {
		t.Fatalf("after a skipped line, the buffer keeps %d bytes", cap(lr.buf))
	}
	if line, err := lr.Next(); err != nil || string(line) != "small" {
		t.Fatalf("got %q, %v", line, err)
	}
}

func TestReaderDefaultLimit(t *testing.T) {
	if lr := NewReader(strings.NewReader(""), 0); lr.limit != DefaultMaxLine {
		t.Fatalf("limit %d, want %d", lr.limit, DefaultMaxLine)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 10)
	if line, err := lr.Next(); err != nil || string(line) != "a" {
		t.Fatalf("got %q, %v", line, err)
	}
	if _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("want boom, got %v", err)
	}
}

// BenchmarkReaderLongLine reads one 16 MiB line: the bytes allocated per
// line show what growing the buffer costs.
func BenchmarkReaderLongLine(b *testing.B) {
	in := strings.Repeat("x", 16<<20) + "\n"
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		lr := NewReader(strings.NewReader(in), 0)
		if line, err := lr.Next(); err != nil || len(line) != len(in)-1 {
			b.Fatalf("%d bytes, %v", len(line), err)
		}
	}
}

// TestReaderRelease: Release drops a big line's buffer at once, leaves
// that line's bytes as they were, and keeps what was read after it.
func TestReaderRelease(t *testing.T) {
	big := strings.Repeat("b", 3<<20)
	lr := NewReader(iotest.HalfReader(strings.NewReader(big+"\nnext\n")), 4<<20)
	line, err := lr.Next()
	if err != nil || len(line) != len(big) {
		t.Fatalf("got %d bytes, %v", len(line), err)
	}
	lr.Release()
	if cap(lr.buf) > maxKeep {
		t.Fatalf("after Release the buffer keeps %d bytes", cap(lr.buf))
	}
	if string(line) != big {
		t.Fatal("Release changed the line it let go of")
	}
	lr.Release() // nothing to let go of: a no-op
	if line, err := lr.Next(); err != nil || string(line) != "next" {
		t.Fatalf("got %q, %v", line, err)
	}
}
