package jsonrpc

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// socketPair returns the two ends of a Unix socket connection.
func socketPair(b testing.TB) (server, client net.Conn) {
	b.Helper()
	dir, err := os.MkdirTemp("", "jb")
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

const benchRequest = `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"sessionId":"s1","text":"hello"}}` + "\n"

// BenchmarkRoundTrip is one request and its answer through a Conn over a
// Unix socket.
func BenchmarkRoundTrip(b *testing.B) {
	server, client := socketPair(b)
	c := NewConn(NDJSON(server, 0), Peer{Transport: "unix"}, Static(HandlerFunc(testHandler)), Options{})
	defer func() { client.Close(); _ = c.Wait() }()
	r := bufio.NewReader(client)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.WriteString(client, benchRequest); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTripFloor is the same exchange with a server that only
// reads a line and writes a fixed answer: the socket's own cost.
func BenchmarkRoundTripFloor(b *testing.B) {
	server, client := socketPair(b)
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","text":"hello"}}` + "\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(server)
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				return
			}
			if _, err := server.Write(answer); err != nil {
				return
			}
		}
	}()
	defer func() { client.Close(); <-done }()
	r := bufio.NewReader(client)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.WriteString(client, benchRequest); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNotify is one notification (a session/update sized payload)
// from Conn.Notify to a client reading as fast as it can over a Unix
// socket.
func BenchmarkNotify(b *testing.B) {
	server, client := socketPair(b)
	c := NewConn(NDJSON(server, 0), Peer{Transport: "unix"}, Static(HandlerFunc(testHandler)), Options{})
	defer func() { client.Close(); _ = c.Wait() }()
	type chunk struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	var p chunk
	p.SessionID = "20261123T194939Z-11eea7a2fc3c2449"
	p.Update.SessionUpdate = "agent_message_chunk"
	p.Update.Content.Type = "text"
	p.Update.Content.Text = "a few words of the answer"
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
	if err := c.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	_ = c.Close()
	if n := <-read; n < b.N {
		b.Fatalf("client read %d of %d frames", n, b.N)
	}
}
