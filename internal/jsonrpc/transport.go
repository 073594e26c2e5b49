package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Stream is one accepted client: a byte stream and who is behind it.
type Stream struct {
	io.ReadWriteCloser
	Peer Peer
}

// Listener is a transport's source of clients: a Unix socket, later a
// WebSocket endpoint. Dispatch and sessions see only the Streams it
// yields.
type Listener interface {
	// Accept waits for the next client. Clients the transport refuses
	// (another user, say) are dealt with inside and never returned. After
	// Close it returns an error matching net.ErrClosed.
	Accept() (Stream, error)
	// Close stops accepting and unblocks Accept. It may be called more
	// than once.
	Close() error
	// Addr names the endpoint, for logs.
	Addr() string
}

// ServeHooks are told when clients come and go; either may be nil. They
// are called from Serve's goroutines, one at a time per connection.
type ServeHooks struct {
	// Opened is called when a client's Conn has started.
	Opened func(c *Conn)
	// Closed is called when it has ended and its goroutines returned.
	Closed func(c *Conn)
}

// Serve accepts clients from l and serves each on its own Conn until ctx
// ends or l fails; then it closes l, shuts every Conn down (the requests
// under way are answered, within Options.ShutdownGrace), waits for them
// and returns nil (ctx's end) or l's error. Accept errors that are not the
// listener's end are logged and retried after a pause.
func Serve(ctx context.Context, l Listener, nh NewHandler, opts Options, hooks ServeHooks) error {
	opts = opts.withDefaults()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = make(map[*Conn]struct{})
	)
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()
	var err error
	pause := 10 * time.Millisecond
	for {
		s, aerr := l.Accept()
		if aerr != nil {
			if ctx.Err() != nil || errors.Is(aerr, net.ErrClosed) {
				if ctx.Err() == nil {
					err = fmt.Errorf("accepting clients on %s: %w", l.Addr(), aerr)
				}
				break
			}
			fmt.Fprintf(opts.Log, "jsonrpc: accepting on %s: %v (retrying in %v)\n", l.Addr(), aerr, pause)
			retry := time.NewTimer(pause)
			select {
			case <-retry.C:
			case <-ctx.Done():
				retry.Stop()
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 10 * time.Millisecond
		c := NewConn(s.ReadWriteCloser, s.Peer, nh, opts)
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		if hooks.Opened != nil {
			hooks.Opened(c)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Wait()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			if hooks.Closed != nil {
				hooks.Closed(c)
			}
		}()
	}
	_ = l.Close()
	grace, cancel := context.WithTimeout(context.Background(), opts.ShutdownGrace)
	defer cancel()
	mu.Lock()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Shutdown(grace)
		}()
	}
	mu.Unlock()
	wg.Wait()
	return err
}
