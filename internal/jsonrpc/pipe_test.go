package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func batchOf(msgs ...string) *Batch {
	b := &Batch{}
	for _, m := range msgs {
		b.Add([]byte(m))
	}
	return b
}

// Messages cross a pipe whole and in order both ways, a batch as its
// messages, and the writer's batch can be reused at once.
func TestPipeCarriesMessagesInOrder(t *testing.T) {
	a, b := NewPipe()
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	progress := 0
	batch := batchOf(`{"n":1}`, `[2]`, `"three"`)
	batch.progress = func() { progress++ }
	wrote := make(chan error, 1)
	go func() {
		err := a.Write(ctx, batch)
		batch.Reset()
		batch.Add([]byte(`"XXXXXXX"`)) // the reader's copies stay as they were
		wrote <- err
	}()
	for _, want := range []string{`{"n":1}`, `[2]`, `"three"`} {
		got, err := b.Read(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("read %q %v, want %q", got, err, want)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if progress != 2 {
		t.Errorf("a batch of 3 made progress %d times, want 2 (after each message but the last)", progress)
	}
	go func() { wrote <- b.Write(ctx, batchOf(`{"back":true}`)) }()
	if got, err := a.Read(ctx); err != nil || string(got) != `{"back":true}` {
		t.Fatalf("the other way: %q %v", got, err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}

// Close ends both ways: the other end reads io.EOF and its writes fail;
// this end's own calls fail with net.ErrClosed. CloseWrite ends one way
// only, CloseRead the other.
func TestPipeEnds(t *testing.T) {
	ctx := context.Background()
	a, b := NewPipe()
	blocked := make(chan error, 1)
	go func() { blocked <- a.Write(ctx, batchOf(`1`)) }()
	time.Sleep(10 * time.Millisecond) // the write waits for a reader
	_ = a.Close()
	if err := <-blocked; !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write blocked when its end closed: %v", err)
	}
	if _, err := b.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("read after the other end closed: %v, want EOF", err)
	}
	if err := b.Write(ctx, batchOf(`2`)); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write after the other end closed: %v, want io.ErrClosedPipe", err)
	}
	if _, err := a.Read(ctx); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read on a closed end: %v, want net.ErrClosed", err)
	}
	_ = a.Close() // again: nothing

	a, b = NewPipe()
	defer a.Close()
	defer b.Close()
	_ = a.(interface{ CloseWrite() error }).CloseWrite()
	if _, err := b.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("read after CloseWrite: %v, want EOF", err)
	}
	go func() { blocked <- b.Write(ctx, batchOf(`"still"`)) }()
	if got, err := a.Read(ctx); err != nil || string(got) != `"still"` {
		t.Errorf("after CloseWrite the other way still works: %q %v", got, err)
	}
	<-blocked
	_ = a.(halfCloser).CloseRead()
	if _, err := a.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("read after CloseRead: %v, want EOF", err)
	}
	if err := b.Write(ctx, batchOf(`3`)); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write to an end that stopped reading: %v, want io.ErrClosedPipe", err)
	}
}

// A Read or Write that waits ends with its context, with the cause.
func TestPipeHonoursContext(t *testing.T) {
	a, b := NewPipe()
	defer a.Close()
	defer b.Close()
	cause := errors.New("the caller gave up")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(10*time.Millisecond, func() { cancel(cause) })
	if _, err := a.Read(ctx); !errors.Is(err, cause) {
		t.Errorf("read: %v", err)
	}
	if err := a.Write(ctx, batchOf(`1`)); !errors.Is(err, cause) {
		t.Errorf("write: %v", err)
	}
}

// Two Conns joined by a pipe talk as over a socket: a call, the
// notifications its job sends before its answer, a call back to the
// caller; and a peer that stops reading is let go after the stall
// timeout, as over a socket.
func TestConnsOverAPipe(t *testing.T) {
	a, b := NewPipe()
	server := NewConn(a, Peer{Transport: "memory"}, Static(HandlerFunc(testHandler)), Options{})
	var notes []int
	client := NewConn(b, Peer{Transport: "memory"}, Static(HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		switch req.Method {
		case "update":
			var p struct{ I int }
			_ = json.Unmarshal(req.Params, &p)
			notes = append(notes, p.I) // the reader's goroutine, one at a time
			return Result(nil)
		case "client/question":
			return Result("because")
		}
		return Fail(MethodNotFound(req.Method))
	})), Options{})
	ctx := context.Background()
	res, err := client.Call(ctx, "stream", map[string]int{"N": 300})
	if err != nil || string(res) != `{"sent":300}` {
		t.Fatalf("stream: %s %v", res, err)
	}
	if len(notes) != 300 || notes[0] != 0 || notes[299] != 299 {
		t.Fatalf("notifications before the answer: %d, want 300 in order", len(notes))
	}
	if res, err := client.Call(ctx, "ask", nil); err != nil || string(res) != `"because"` {
		t.Fatalf("a call back to the caller: %s %v", res, err)
	}
	_ = client.Close()
	if err := client.Wait(); !errors.Is(err, ErrClosed) {
		t.Errorf("client: %v", err)
	}
	if err := server.Wait(); err != nil {
		t.Errorf("server after its client closed: %v", err)
	}

	// A peer that reads nothing.
	a, b = NewPipe()
	defer b.Close()
	server = NewConn(a, Peer{Transport: "memory"}, Static(HandlerFunc(testHandler)), Options{QueueFrames: 4, StallTimeout: 100 * time.Millisecond})
	if err := b.Write(ctx, batchOf(`{"jsonrpc":"2.0","id":1,"method":"stream","params":{"N":100000}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-server.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a peer that reads nothing was kept")
	}
	if err := server.Err(); !errors.Is(err, ErrStalled) {
		t.Fatalf("Err = %v, want ErrStalled", err)
	}
}

// Shutdown over a pipe stops reading and still answers the work under
// way: the pipe's CloseRead.
func TestShutdownOverAPipe(t *testing.T) {
	a, b := NewPipe()
	defer b.Close()
	release := make(chan struct{})
	c := NewConn(a, Peer{Transport: "memory"}, Static(HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		return Async(func(ctx context.Context) (any, error) {
			<-release
			return "finished", nil
		})
	})), Options{})
	ctx := context.Background()
	if err := b.Write(ctx, batchOf(`{"jsonrpc":"2.0","id":1,"method":"work"}`)); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		stopped <- c.Shutdown(sctx)
	}()
	time.Sleep(20 * time.Millisecond)
	close(release)
	got, err := b.Read(ctx)
	if err != nil || string(got) != `{"jsonrpc":"2.0","id":1,"result":"finished"}` {
		t.Fatalf("the answer of the work under way: %q %v", got, err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := b.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after Shutdown the peer reads %v, want EOF", err)
	}
}

// The NDJSON transport writes a batch with one write when it fits a
// piece, splits a bigger one into pieces with progress between them,
// reads lines without their CR, and reports a line over its limit
// without ending.
func TestNDJSONTransport(t *testing.T) {
	w := &countingWriter{}
	tr := NDJSON(struct {
		io.Reader
		io.WriteCloser
	}{eof{}, w}, 0)
	ctx := context.Background()
	if err := tr.Write(ctx, batchOf(`1`, `2`, `3`)); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 || w.buf != "1\n2\n3\n" {
		t.Errorf("a small batch: %d writes of %q, want one", w.writes, w.buf)
	}
	big := batchOf(`"` + strings.Repeat("x", 3*pieceBytes) + `"`)
	progress := 0
	big.progress = func() { progress++ }
	w.writes = 0
	if err := tr.Write(ctx, big); err != nil {
		t.Fatal(err)
	}
	if want := (big.Size() + pieceBytes - 1) / pieceBytes; w.writes != want || progress != want-1 {
		t.Errorf("a batch of %d bytes: %d writes and %d progress, want %d and %d", big.Size(), w.writes, progress, want, want-1)
	}

	in := "{\"a\":1}\r\n" + `{"pad":"` + strings.Repeat("x", 100) + "\"}\n[2]"
	tr = NDJSON(struct {
		io.Reader
		io.WriteCloser
	}{strings.NewReader(in), w}, 64)
	if got, err := tr.Read(ctx); err != nil || string(got) != `{"a":1}` {
		t.Errorf("first line: %q %v", got, err)
	}
	var tl *TooLongError
	if _, err := tr.Read(ctx); !errors.As(err, &tl) || tl.Limit != 64 {
		t.Errorf("a line over the limit: %v", err)
	}
	if got, err := tr.Read(ctx); err != nil || string(got) != `[2]` {
		t.Errorf("after the long line: %q %v", got, err)
	}
	if _, err := tr.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}
}

type countingWriter struct {
	writes int
	buf    string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.buf += string(p)
	return len(p), nil
}

func (w *countingWriter) Close() error { return nil }
