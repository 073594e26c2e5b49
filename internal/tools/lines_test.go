package tools

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReaderAcrossBufferBoundaries(t *testing.T) {
	// A 16-byte buffer forces long lines and CRLF endings to straddle reads.
	input := "short\r\n" + strings.Repeat("a", 15) + "\r\n" + strings.Repeat("b", 40) + "\n\n" + "tail"
	lr := &lineReader{br: bufio.NewReaderSize(strings.NewReader(input), 16), keepBytes: 20}
	type got struct {
		text string
		size int
	}
	want := []got{{"short", 5}, {strings.Repeat("a", 15), 15}, {strings.Repeat("b", 20), 40}, {"", 0}, {"tail", 4}}
	for i, w := range want {
		ln, err := lr.next()
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if string(ln.text) != w.text || ln.size != w.size {
			t.Errorf("line %d = %q (%d), want %q (%d)", i, ln.text, ln.size, w.text, w.size)
		}
	}
	if _, err := lr.next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last line: %v", err)
	}
}

func TestLineReaderSkipAndCount(t *testing.T) {
	input := strings.Repeat("x", 100) + "\nb\nc\nd"
	lr := &lineReader{br: bufio.NewReaderSize(strings.NewReader(input), 16), keepBytes: 10}
	if n, err := lr.skip(context.Background(), 2); n != 2 || err != nil {
		t.Fatalf("skip = %d, %v", n, err)
	}
	if ln, _ := lr.next(); string(ln.text) != "c" {
		t.Errorf("after skip: %q", ln.text)
	}
	if n, err := lr.count(context.Background()); n != 1 || err != nil {
		t.Errorf("count = %d, %v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lr = &lineReader{br: bufio.NewReader(strings.NewReader(input)), keepBytes: 10}
	if _, err := lr.skip(ctx, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled skip: %v", err)
	}
}
