package jsonrpc

import (
	"bufio"
	"context"
	"testing"

	"zot.dev/zot/internal/duplex"
)

// Encoded params go on the wire byte for byte.
func TestNotifyEncodedAsIs(t *testing.T) {
	a, b := duplex.Pair()
	c := NewConn(a, Peer{Transport: "test", Label: "test"}, Static(HandlerFunc(func(context.Context, *Conn, *Request) Reply { return Result(nil) })), Options{})
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
