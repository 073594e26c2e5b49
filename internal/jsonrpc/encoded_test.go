package jsonrpc

import (
	"bufio"
	"context"
	"strings"
	"testing"

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
