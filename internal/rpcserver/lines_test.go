package rpcserver

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	in := "a\r\n" + strings.Repeat("x", 100) + "\nb\u2028c\n\n" + strings.Repeat("y", 50) + "\nlast"
	lr := newLineReader(strings.NewReader(in), 60)
	want := []string{"a", "<too long>", "b\u2028c", "", strings.Repeat("y", 50), "last"}
	for i, w := range want {
		line, err := lr.next()
		got := string(line)
		if errors.Is(err, errLineTooLong) {
			got, err = "<too long>", nil
		}
		if err != nil || got != w {
			t.Fatalf("line %d: got %q, %v; want %q", i, got, err, w)
		}
	}
	if _, err := lr.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestLineReaderLongLineAcrossBuffers(t *testing.T) {
	big := strings.Repeat("z", 200<<10) // larger than the 64 KiB read buffer
	lr := newLineReader(strings.NewReader(big+"\nok\n"+big+"\n"), 300<<10)
	for _, w := range []string{big, "ok", big} {
		line, err := lr.next()
		if err != nil || string(line) != w {
			t.Fatalf("got %d bytes, %v", len(line), err)
		}
	}
	lr = newLineReader(strings.NewReader(big+"\nok\n"), 100<<10)
	if _, err := lr.next(); !errors.Is(err, errLineTooLong) {
		t.Fatalf("want too long, got %v", err)
	}
	if line, err := lr.next(); err != nil || string(line) != "ok" {
		t.Fatalf("after a long line: %q %v", line, err)
	}
}
