package exthost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// seqFrame is a frame of a test: who sent it, its number, and padding.
type seqFrame struct {
	Sender, Seq int
	Pad         string
}

func (f seqFrame) AppendJSON(b []byte) []byte {
	b = append(b, `{"sender":`...)
	b = strconv.AppendInt(b, int64(f.Sender), 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(f.Seq), 10)
	b = append(b, `,"pad":"`...)
	b = append(b, f.Pad...)
	return append(b, `"}`...)
}

// pipeOutbox returns an outbox writing into a pipe and the pipe's read end.
func pipeOutbox(t *testing.T) (*outbox, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	o := newOutbox(w)
	t.Cleanup(o.closeNow)
	return o, r
}

// readFrames reads lines until EOF and checks each is a whole frame.
func readFrames(t *testing.T, r io.Reader) []seqFrame {
	t.Helper()
	var out []seqFrame
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f seqFrame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Errorf("a broken frame (interleaved?): %v: %.80s", err, sc.Bytes())
			continue
		}
		out = append(out, f)
	}
	return out
}

// Frames from many goroutines, of sizes below and above what a pipe takes
// in one write, arrive whole and in each sender's order, while the pipe
// fills and drains; close writes what waits before it closes.
func TestOutboxOrderAndWholeFrames(t *testing.T) {
	o, r := pipeOutbox(t)
	got := make(chan []seqFrame)
	go func() { got <- readFrames(t, r) }()
	const senders, each = 6, 300
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				pad := strings.Repeat("x", (i*37+s*101)%9000) // up to past PIPE_BUF
				if err := o.send(seqFrame{Sender: s, Seq: i, Pad: pad}); err != nil {
					t.Errorf("send: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	o.close(context.Background())
	frames := <-got
	if len(frames) != senders*each {
		t.Fatalf("got %d frames, sent %d", len(frames), senders*each)
	}
	next := make([]int, senders)
	for _, f := range frames {
		if f.Seq != next[f.Sender] {
			t.Fatalf("sender %d: frame %d came when %d was due", f.Sender, f.Seq, next[f.Sender])
		}
		next[f.Sender]++
	}
}

// An extension that does not read never blocks a sender: frames queue,
// hasRoom turns false at the high-water mark, and once it reads, every
// frame arrives in order.
func TestOutboxNeverBlocks(t *testing.T) {
	o, r := pipeOutbox(t)
	pad := strings.Repeat("y", 1000)
	n := 0
	for o.hasRoom() {
		if err := o.send(seqFrame{Seq: n, Pad: pad}); err != nil {
			t.Fatal(err)
		}
		n++
		if n > 10*outboxHighWater {
			t.Fatal("hasRoom stays true for a peer that does not read")
		}
	}
	if n < outboxHighWater {
		t.Fatalf("no room after %d frames", n)
	}
	got := make(chan []seqFrame)
	go func() { got <- readFrames(t, r) }()
	o.close(context.Background())
	frames := <-got
	if len(frames) != n {
		t.Fatalf("got %d frames, sent %d", len(frames), n)
	}
	for i, f := range frames {
		if f.Seq != i {
			t.Fatalf("frame %d came as number %d", f.Seq, i)
		}
	}
}

// close gives up on a peer that does not read when its context ends:
// the pipe is closed, which ends the stuck write, and later sends fail.
func TestOutboxCloseCutsAStuckWrite(t *testing.T) {
	o, _ := pipeOutbox(t)
	pad := strings.Repeat("z", 60000)
	for range 4 { // more than a pipe holds: the goroutine blocks writing
		o.send(seqFrame{Pad: pad})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o.close(ctx)
	select {
	case <-o.done:
	default:
		t.Fatal("the goroutine still runs after close")
	}
	if err := o.send(seqFrame{}); err == nil {
		t.Fatal("a send after close was taken")
	}
}

// Once the peer has gone, sending fails with the write error.
func TestOutboxPeerGone(t *testing.T) {
	o, r := pipeOutbox(t)
	r.Close()
	var err error
	for range 3 {
		if err = o.send(seqFrame{}); err != nil {
			break
		}
		<-o.done // the goroutine met the error, if the direct write did not
	}
	if err == nil || errors.Is(err, errOutboxClosed) {
		t.Fatalf("send to a closed pipe: %v", err)
	}
}
