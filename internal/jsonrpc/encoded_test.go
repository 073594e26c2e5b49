package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/duplex"
)

// Encoded params go on the wire byte for byte.
func TestNotifyEncodedAsIs(t *testing.T) {
	a, b := duplex.Pair()
	c := NewConn(NDJSON(a, 0), Peer{Transport: "test", Label: "test"}, Static(HandlerFunc(func(context.Context, *Conn, *Request) Reply { return Result(nil) })), Options{})
	defer func() { c.Close(); c.Wait() }()
	if err := c.Notify(context.Background(), "session/update", Encoded(`{"text":"a\u2028b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(context.Background(), "empty", Encoded(nil)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(b)
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"text":"a\u2028b"}}` + "\n",
		`{"jsonrpc":"2.0","method":"empty","params":null}` + "\n",
	} {
		got, err := br.ReadString('\n')
		if err != nil || got != want {
			t.Errorf("got %q %v, want %q", got, err, want)
		}
	}
}

// What Then sends comes after the answer, for an answer at once and for
// an Async one.
func TestThenSendsAfterTheAnswer(t *testing.T) {
	a, b := duplex.Pair()
	var c *Conn
	c = NewConn(NDJSON(a, 0), Peer{Transport: "test", Label: "test"}, Static(HandlerFunc(func(ctx context.Context, _ *Conn, req *Request) Reply {
		after := func() { _ = c.Notify(context.Background(), "after/"+req.Method, nil) }
		if req.Method == "async" {
			return Async(func(context.Context) (any, error) { return "late", nil }).Then(after)
		}
		return Result("now").Then(after)
	})), Options{})
	defer func() { c.Close(); c.Wait() }()
	br := bufio.NewReader(b)
	for _, m := range []string{"sync", "async"} {
		if _, err := b.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + m + `"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		first, _ := br.ReadString('\n')
		second, _ := br.ReadString('\n')
		if !strings.Contains(first, `"result"`) || !strings.Contains(second, `"method":"after/`+m+`"`) {
			t.Errorf("%s: %q then %q", m, first, second)
		}
	}
}

// Post never waits: past the queue's bound it still queues, and a client
// that falls far behind is dropped (ErrStalled) at once, not after the
// stall timeout. Ready waits for room; Behind says the queue is past its
// bound. A frame made of NotificationHead, params and '}' is a whole
// notification.
func TestPostWithoutWaiting(t *testing.T) {
	a, b := NewPipe()
	defer b.Close()
	c := NewConn(a, Peer{Transport: "test", Label: "stuck"}, Static(HandlerFunc(func(context.Context, *Conn, *Request) Reply { return Result(nil) })), Options{QueueFrames: 4, StallTimeout: time.Hour})
	defer c.Close()
	frame := append(NotificationHead("x"), `{"n":1}}`...)
	if !json.Valid(frame) || string(frame) != `{"jsonrpc":"2.0","method":"x","params":{"n":1}}` {
		t.Fatalf("frame %s", frame)
	}
	var err error
	posted := 0
	for ; posted < 1000 && err == nil; posted++ {
		err = c.Post(frame)
		if posted == 8 && !c.Behind() {
			t.Fatal("a queue of 4 frames holding more is not behind")
		}
	}
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("after %d frames to a client that reads nothing: %v, want ErrStalled", posted, err)
	}
	if posted < 4*4 {
		t.Fatalf("dropped after %d frames, before it was far behind", posted)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Ready(ctx) // returns: the connection has ended
}
