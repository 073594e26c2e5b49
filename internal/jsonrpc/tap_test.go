package jsonrpc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// A tap over a Conn's transport sees each message once, both ways, in
// the order of the wire, with its direction; bad input and notifications
// too. The connection works as without it.
func TestTapSeesEveryMessage(t *testing.T) {
	a, b := net.Pipe()
	rec := &Recorder{}
	c := NewConn(Tap(NDJSON(a, 256), rec.Record), Peer{Transport: "pipe"}, Static(HandlerFunc(testHandler)), Options{})
	cl := &client{t: t, conn: b, r: bufio.NewReader(b)}
	defer func() { _ = b.Close(); _ = c.Close(); _ = c.Wait() }()
	start := time.Now()
	sent := []string{
		`{"jsonrpc":"2.0","id":1,"method":"stream","params":{"N":3}}`,
		`not json`,
		`{"jsonrpc":"2.0","method":"note","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"echo","params":["x"]}`,
	}
	for _, line := range sent {
		cl.send(line)
	}
	var read []string
	for len(read) < 6 {
		read = append(read, cl.next().raw)
	}
	cl.send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`) // over the limit: not seen
	read = append(read, cl.next().raw)
	kept, dropped := rec.Traffic()
	if dropped != 0 {
		t.Fatalf("dropped %d", dropped)
	}
	var in, out []string
	for _, tr := range kept {
		if tr.At.Before(start) || tr.At.After(time.Now()) {
			t.Errorf("%s %s seen at %v, outside the test", tr.Dir, tr.Message, tr.At)
		}
		switch tr.Dir {
		case In:
			in = append(in, string(tr.Message))
		case Out:
			out = append(out, string(tr.Message))
		default:
			t.Errorf("direction %v", tr.Dir)
		}
	}
	if fmt.Sprint(in) != fmt.Sprint(sent) {
		t.Errorf("the tap read\n%q\nthe client sent\n%q", in, sent)
	}
	if fmt.Sprint(out) != fmt.Sprint(read) {
		t.Errorf("the tap wrote\n%q\nthe client read\n%q", out, read)
	}
}

// Tap passes Unread and CloseRead on: a Conn shut down over a tapped
// socket still answers the work under way.
func TestTapKeepsShutdownGentle(t *testing.T) {
	server, peer := socketPair(t)
	if u, ok := Tap(NDJSON(server, 0), func(Traffic) {}).(unreader); !ok {
		t.Error("a tap hides Unread")
	} else if _, ok := u.Unread(); !ok {
		t.Error("a tap over a socket cannot tell what the client has not read")
	}
	release := make(chan struct{})
	rec := &Recorder{}
	c := NewConn(Tap(NDJSON(server, 0), rec.Record), Peer{Transport: "unix"}, Static(HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		return Async(func(ctx context.Context) (any, error) {
			<-release
			return "finished", nil
		})
	})), Options{})
	cl := &client{t: t, conn: peer, r: bufio.NewReader(peer)}
	cl.send(`{"jsonrpc":"2.0","id":1,"method":"work"}`)
	for {
		if kept, _ := rec.Traffic(); len(kept) == 1 {
			break // the request is being served
		}
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stopped <- c.Shutdown(ctx)
	}()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if f := cl.next(); f.raw != `{"jsonrpc":"2.0","id":1,"result":"finished"}` {
		t.Fatalf("answer: %s", f.raw)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// A Recorder with Max keeps the last Max messages and counts the rest.
func TestRecorderKeepsTheLast(t *testing.T) {
	r := &Recorder{Max: 3}
	msg := []byte("0")
	for i := range 7 {
		msg[0] = byte('0' + i)
		r.Record(Traffic{Dir: Out, At: time.Now(), Message: msg}) // reused: the recorder copies
	}
	kept, dropped := r.Traffic()
	var got []string
	for _, tr := range kept {
		got = append(got, string(tr.Message))
	}
	if strings.Join(got, ",") != "4,5,6" || dropped != 4 {
		t.Errorf("kept %v, dropped %d; want 4,5,6 and 4", got, dropped)
	}
}

// Options.Tap taps every connection NewConn makes (a listener's, a
// pipe's) with the function it gives for the peer, and says when the
// connection has ended.
func TestOptionsTap(t *testing.T) {
	a, b := NewPipe()
	rec := &Recorder{}
	var peers []Peer
	ended := make(chan struct{})
	opts := Options{Tap: func(p Peer) (func(Traffic), func()) {
		peers = append(peers, p)
		return rec.Record, func() { close(ended) }
	}}
	c := NewConn(a, Peer{Transport: "memory", Label: "pipe-1"}, Static(HandlerFunc(testHandler)), opts)
	client := NewConn(b, Peer{Transport: "memory"}, Static(HandlerFunc(testHandler)), Options{})
	if _, err := client.Call(context.Background(), "echo", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	_ = client.Close()
	_ = client.Wait()
	_ = c.Wait()
	select {
	case <-ended:
	default:
		t.Fatal("ended was not called when the connection ended")
	}
	if len(peers) != 1 || peers[0].Label != "pipe-1" {
		t.Fatalf("Tap asked for %v", peers)
	}
	kept, _ := rec.Traffic()
	if len(kept) != 2 || kept[0].Dir != In || kept[1].Dir != Out || !strings.Contains(string(kept[0].Message), `"echo"`) {
		t.Fatalf("the tap saw %d messages: %v", len(kept), kept)
	}
}
