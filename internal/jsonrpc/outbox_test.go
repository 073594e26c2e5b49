package jsonrpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"
)

// A run of frames longer than the queue holds goes out whole and in
// order: what fits is queued at once, the rest as the writer makes room.
func TestSendFuncsLongerThanTheQueue(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	failed := make(chan error, 1)
	o := newOutbox(NDJSON(struct {
		io.Reader
		io.WriteCloser
	}{eof{}, w}, 0), Options{QueueFrames: 3, QueueBytes: 1 << 20, StallTimeout: time.Minute}, func(err error) { failed <- err }, t.Logf)
	const n = 50
	sent := make(chan error, 1)
	go func() {
		sent <- o.sendFuncs(context.Background(), true, n, func(int) int { return 8 }, func(b []byte, i int) []byte {
			return strconv.AppendInt(b, int64(i), 10)
		})
	}()
	sc := bufio.NewScanner(r)
	for i := range n {
		if !sc.Scan() {
			t.Fatalf("frame %d: %v", i, sc.Err())
		}
		if got := sc.Text(); got != fmt.Sprint(i) {
			t.Fatalf("frame %d is %q", i, got)
		}
		if i%7 == 0 {
			time.Sleep(time.Millisecond) // a slow reader: the queue fills
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	o.close()
	<-o.done
	select {
	case err := <-failed:
		t.Fatal(err)
	default:
	}
}

// eof is an input that has ended.
type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }
