package jsonrpc

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unixListener serves a net.UnixListener as a Listener.
type unixListener struct{ l *net.UnixListener }

func (u unixListener) Accept() (Stream, error) {
	c, err := u.l.AcceptUnix()
	if err != nil {
		return Stream{}, err
	}
	return Stream{ReadWriteCloser: c, Peer: Peer{Transport: "unix"}}, nil
}
func (u unixListener) Close() error { return u.l.Close() }
func (u unixListener) Addr() string { return u.l.Addr().String() }

func TestServeAnswersWorkUnderWayWhenStopping(t *testing.T) {
	dir, err := os.MkdirTemp("", "jr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		return Async(func(ctx context.Context) (any, error) {
			close(started)
			time.Sleep(100 * time.Millisecond) // work that outlives the stop
			return "finished", nil
		})
	})
	var opened, closed int
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error)
	go func() {
		served <- Serve(ctx, NDJSONListener(unixListener{l}, 0), Static(h), Options{}, ServeHooks{
			Opened: func(*Conn) { opened++ },
			Closed: func(*Conn) { closed++ },
		})
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, `{"jsonrpc":"2.0","id":1,"method":"work"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	<-started
	stop()
	out, err := io.ReadAll(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != `{"jsonrpc":"2.0","id":1,"result":"finished"}` {
		t.Fatalf("after stopping: %q", got)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if opened != 1 || closed != 1 {
		t.Errorf("hooks: %d opened, %d closed", opened, closed)
	}
}
