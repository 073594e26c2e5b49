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

// Transport carries whole messages between a Conn and its peer: each
// message is one JSON value without its framing. How messages are
// framed (lines of NDJSON, WebSocket messages, values in memory) is the
// transport's alone; a Conn sees only messages. [NDJSON] is JSON-RPC
// over a byte stream (a Unix socket, stdin and stdout), [NewPipe] a pair
// of connected transports in memory, and [Tap] wraps any transport to
// show its traffic.
//
// A Conn calls Read from one goroutine and Write from another, never
// each concurrently with itself; Close may be called from any goroutine,
// more than once.
type Transport interface {
	// Read returns the next message, which is the caller's to keep. It
	// returns io.EOF when the peer has ended its input (every message
	// before was returned), a *TooLongError for a message over the
	// transport's limit (skipped: the next Read reads on), and any other
	// error when the transport failed. ctx ends a Read that waits when
	// the transport can stop one; Close always does.
	Read(ctx context.Context) ([]byte, error)
	// Write sends the messages of b, in order, at once: a transport that
	// can write them with one system call does. b is valid only during
	// the call. A transport that writes b in parts calls b.Progress after
	// each part but the last, so the Conn sees a slow peer read. A Write
	// blocked on a peer that reads nothing returns when the transport is
	// closed; ctx ends it too when the transport can stop one.
	Write(ctx context.Context, b *Batch) error
	// Close ends the transport both ways and unblocks Read and Write.
	Close() error
}

// Optional methods of a Transport, found with a type assertion (a
// decorator such as Tap passes them on):
//
//   - CloseRead() error ends the input only, so the answers of the
//     requests under way still go out (Conn.Shutdown); without it, or
//     when it fails, Shutdown closes the transport at once.
//   - Unread() (n int, ok bool) says how many bytes of what was written
//     the peer has not read yet, as the kernel holds them; fewer than at
//     the last look is progress, even while a Write is blocked. A
//     transport that cannot tell returns ok false (then it is never asked
//     again).
type (
	halfCloser interface{ CloseRead() error }
	unreader   interface{ Unread() (int, bool) }
)

// TooLongError is Transport.Read's error for a message longer than the
// transport's limit. The message was skipped and the transport reads on;
// a Conn answers it with -32600 (kind line_too_long).
type TooLongError struct {
	// Limit is the longest message the transport accepts, in bytes.
	Limit int
}

// Error says how long a message may be.
func (e *TooLongError) Error() string {
	return fmt.Sprintf("a message is longer than %d bytes; it was skipped", e.Limit)
}

// Batch is whole messages, in order, that a Conn hands its transport to
// write at once. A transport sends each Message as one message of its
// own, or, framing with LF, Lines as it stands.
type Batch struct {
	data []byte // the messages, each followed by a LF
	ends []int  // ends[i] is the offset of message i's LF in data
	// progress is called by Progress; nil does nothing.
	progress func()
}

// Len returns how many messages b holds.
func (b *Batch) Len() int { return len(b.ends) }

// Message returns message i, without framing. It is valid only as long
// as b is.
func (b *Batch) Message(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1] + 1
	}
	return b.data[start:b.ends[i]]
}

// Lines returns the messages, each followed by a LF: the batch as
// newline-delimited JSON, ready for one write.
func (b *Batch) Lines() []byte { return b.data }

// Size returns the length of Lines.
func (b *Batch) Size() int { return len(b.data) }

// Add appends a message, which must be one JSON value without a LF.
func (b *Batch) Add(msg []byte) {
	b.data = append(b.data, msg...)
	b.endMessage()
}

// endMessage ends the message appended to b.data since the last one.
func (b *Batch) endMessage() {
	b.data = append(b.data, '\n')
	b.ends = append(b.ends, len(b.data)-1)
}

// Reset empties b, keeping its memory.
func (b *Batch) Reset() {
	b.data = b.data[:0]
	b.ends = b.ends[:0]
}

// Progress tells whoever sends b that the peer took part of it; a
// transport that writes a batch in parts calls it after each part but
// the last.
func (b *Batch) Progress() {
	if b.progress != nil {
		b.progress()
	}
}

// Stream is one accepted client of a byte-stream listener: the stream
// and who is behind it.
type Stream struct {
	io.ReadWriteCloser
	Peer Peer
}

// Listener is a transport's source of clients: a Unix socket, later a
// WebSocket endpoint. Dispatch and sessions see only the Transports it
// yields.
type Listener interface {
	// Accept waits for the next client. Clients the transport refuses
	// (another user, say) are dealt with inside and never returned. After
	// Close it returns an error matching net.ErrClosed.
	Accept() (Transport, Peer, error)
	// Close stops accepting and unblocks Accept. It may be called more
	// than once.
	Close() error
	// Addr names the endpoint, for logs.
	Addr() string
}

// StreamListener is a source of byte-stream clients (a Unix socket):
// [NDJSONListener] makes it a Listener.
type StreamListener interface {
	// Accept waits for the next client, as Listener's does.
	Accept() (Stream, error)
	// Close stops accepting and unblocks Accept.
	Close() error
	// Addr names the endpoint, for logs.
	Addr() string
}

// NDJSONListener returns a Listener whose clients are l's streams, each
// served as [NDJSON] with lines of up to maxLine bytes (0 means
// DefaultMaxLineBytes).
func NDJSONListener(l StreamListener, maxLine int) Listener {
	return ndjsonListener{l: l, maxLine: maxLine}
}

type ndjsonListener struct {
	l       StreamListener
	maxLine int
}

func (n ndjsonListener) Accept() (Transport, Peer, error) {
	s, err := n.l.Accept()
	if err != nil {
		return nil, Peer{}, err
	}
	return NDJSON(s.ReadWriteCloser, n.maxLine), s.Peer, nil
}

func (n ndjsonListener) Close() error { return n.l.Close() }
func (n ndjsonListener) Addr() string { return n.l.Addr() }

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
		t, peer, aerr := l.Accept()
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
		c := NewConn(t, peer, nh, opts)
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
