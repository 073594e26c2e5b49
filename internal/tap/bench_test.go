package tap

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// The cost of the tap when on, beside internal/jsonrpc's BenchmarkRoundTrip
// and BenchmarkNotify (the same exchanges with the tap off: a nil check
// per connection).

func socketPair(b *testing.B) (server, client net.Conn) {
	b.Helper()
	dir, err := os.MkdirTemp("", "tb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("unix", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	server = <-accepted
	b.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

func echo(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
	return jsonrpc.Result(req.Params)
}

// BenchmarkTapOnRoundTrip is jsonrpc's BenchmarkRoundTrip with the tap
// on: both frames recorded, paired and kept in the session's ring.
func BenchmarkTapOnRoundTrip(b *testing.B) {
	tp := New(Options{})
	server, client := socketPair(b)
	c := jsonrpc.NewConn(jsonrpc.NDJSON(server, 0), jsonrpc.Peer{Transport: "unix"}, jsonrpc.Static(jsonrpc.HandlerFunc(echo)), jsonrpc.Options{Tap: tp.JSONRPC})
	defer func() { client.Close(); _ = c.Wait() }()
	r := bufio.NewReader(client)
	const req = `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"sessionId":"s1","text":"hello"}}` + "\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.WriteString(client, req); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTapOnNotify is jsonrpc's BenchmarkNotify with the tap on: each
// agent_message_chunk recorded as it is written.
func BenchmarkTapOnNotify(b *testing.B) {
	tp := New(Options{})
	server, client := socketPair(b)
	c := jsonrpc.NewConn(jsonrpc.NDJSON(server, 0), jsonrpc.Peer{Transport: "unix"}, jsonrpc.Static(jsonrpc.HandlerFunc(echo)), jsonrpc.Options{Tap: tp.JSONRPC})
	defer func() { client.Close(); _ = c.Wait() }()
	p := map[string]any{"sessionId": "20261123T194939Z-11eea7a2fc3c2449", "update": map[string]any{
		"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "a few words of the answer"}}}
	read := make(chan int)
	go func() {
		r := bufio.NewReader(client)
		n := 0
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				read <- n
				return
			}
			n++
		}
	}()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Notify(ctx, "session/update", p); err != nil {
			b.Fatal(err)
		}
	}
	_ = c.Close()
	_ = c.Wait()
	<-read
}

// BenchmarkRPCFrame is what the tap costs a `zot rpc` door per text
// delta it writes.
func BenchmarkRPCFrame(b *testing.B) {
	tp := New(Options{})
	c := tp.RPC("stdio", "bench", func() string { return "s" })
	line := []byte(`{"type":"text_delta","seq":42,"prompt_id":"p1","delta":"a few words of the answer"}`)
	b.ReportAllocs()
	for b.Loop() {
		c.Frame(false, time.Now(), line)
	}
}
