package reqbody

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// build makes a recycled payload of bufs whose messages are text.
func build(bufs *Buffers, text string) *Payload {
	return bufs.Payload([]byte(`{"model":"m"}`), "messages", len(text)+2, func(b []byte) []byte {
		return append(append(append(b, '"'), text...), '"')
	}, []byte(`[]`), nil)
}

func read(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuffersReuseASentBody(t *testing.T) {
	var bufs Buffers
	first := build(&bufs, strings.Repeat("a", 100))
	r := first.Reader()
	want := `{"model":"m","messages":"` + strings.Repeat("a", 100) + `","tools":[]}`
	if got := read(t, r); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
	firstArray := &first.Bytes()[0]

	// Released but its reader still open: the next body gets a buffer of
	// its own, and the first stays as it was.
	first.Release()
	second := build(&bufs, strings.Repeat("b", 100))
	if &second.Bytes()[0] == firstArray {
		t.Fatal("a body whose reader is open was written over")
	}
	if got := string(first.Bytes()); got != want {
		t.Fatalf("the first body changed to %s", got)
	}

	// Closed: the next body takes its buffer.
	if err := r.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, errReadClosed) {
		t.Fatalf("read after close: %d, %v", n, err)
	}
	third := build(&bufs, strings.Repeat("c", 90))
	if &third.Bytes()[0] != firstArray {
		t.Fatal("the sent body's buffer was not reused")
	}
	if got, want := read(t, third.Reader()), `{"model":"m","messages":"`+strings.Repeat("c", 90)+`","tools":[]}`; got != want {
		t.Fatalf("body in a reused buffer %s, want %s", got, want)
	}

	// A body larger than the spare gets a new buffer.
	second.Release()
	big := build(&bufs, strings.Repeat("d", 1000))
	if got := len(read(t, big.Reader())); got != 1000+len(`{"model":"m","messages":"","tools":[]}`) {
		t.Fatalf("big body of %d bytes", got)
	}
}

// A reader closed while a read is under way (the HTTP transport may close
// a request's body from another goroutine) gives the buffer back only
// when that read ends: run under -race, a body built in the buffer
// meanwhile would show as a race.
func TestBuffersCloseDuringRead(t *testing.T) {
	var bufs Buffers
	for range 200 {
		p := build(&bufs, strings.Repeat("x", 4096))
		r := p.Reader()
		var wg sync.WaitGroup
		wg.Go(func() {
			b := make([]byte, 512)
			for {
				if _, err := r.Read(b); err != nil {
					return
				}
			}
		})
		p.Release()
		_ = r.(io.Closer).Close()
		next := build(&bufs, strings.Repeat("y", 4096))
		wg.Wait()
		next.Release()
	}
}
