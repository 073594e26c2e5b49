package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Direction says which way a message went, seen from the transport's
// owner (the server for a Conn a server made).
type Direction uint8

// The directions of Traffic.
const (
	// In is a message read from the peer.
	In Direction = iota + 1
	// Out is a message written to the peer.
	Out
)

// String returns "in" or "out".
func (d Direction) String() string {
	switch d {
	case In:
		return "in"
	case Out:
		return "out"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Traffic is one message a tap saw.
type Traffic struct {
	Dir Direction
	// At is when the message was read (Read returned it) or handed to
	// the transport to write.
	At time.Time
	// Message is the message without framing. It is the transport's:
	// valid only during the call to the tap's function, which copies
	// what it keeps.
	Message []byte
}

// Tap returns t with see told of every message read from it and
// written to it, in each direction in the order of the wire: an inspector
// or a trace attaches to a connection here, around any transport, with
// nothing else changed. see is called on the connection's reader and
// writer goroutines (so concurrently with itself) while the connection
// waits for it: it must return at once, handing the message on without
// waiting (a bounded buffer that drops, as Recorder keeps). A message
// to write is seen as it is handed to t, before t writes it; a message
// skipped for its length is not seen. Tap passes CloseRead and Unread on
// to t.
func Tap(t Transport, see func(Traffic)) Transport {
	return &tap{t: t, see: see}
}

type tap struct {
	t   Transport
	see func(Traffic)
}

func (p *tap) Read(ctx context.Context) ([]byte, error) {
	msg, err := p.t.Read(ctx)
	if err == nil {
		p.see(Traffic{Dir: In, At: time.Now(), Message: msg})
	}
	return msg, err
}

func (p *tap) Write(ctx context.Context, b *Batch) error {
	now := time.Now()
	for i := range b.Len() {
		p.see(Traffic{Dir: Out, At: now, Message: b.Message(i)})
	}
	return p.t.Write(ctx, b)
}

func (p *tap) Close() error { return p.t.Close() }

func (p *tap) CloseRead() error {
	if cr, ok := p.t.(halfCloser); ok {
		return cr.CloseRead()
	}
	return fmt.Errorf("closing the input only: %w", errors.ErrUnsupported)
}

func (p *tap) Unread() (int, bool) {
	if u, ok := p.t.(unreader); ok {
		return u.Unread()
	}
	return 0, false
}

// Recorder keeps the traffic a tap sees, in memory: Record is a tap's
// function (Tap(t, r.Record)). It keeps the last Max messages (all of
// them when Max is 0) and counts those it let go. Its methods are safe
// for concurrent use.
type Recorder struct {
	// Max bounds how many messages are kept; 0 keeps every one. It must
	// not change once Record was called.
	Max int

	mu      sync.Mutex
	kept    []Traffic // a ring once Max are kept: the oldest at next
	next    int
	dropped int
}

// Record keeps a copy of tr, letting go of the oldest message kept when
// Max are.
func (r *Recorder) Record(tr Traffic) {
	tr.Message = bytes.Clone(tr.Message)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Max > 0 && len(r.kept) >= r.Max {
		r.kept[r.next] = tr
		r.next = (r.next + 1) % len(r.kept)
		r.dropped++
		return
	}
	r.kept = append(r.kept, tr)
}

// Traffic returns the messages kept, oldest first, and how many older
// ones were let go.
func (r *Recorder) Traffic() (kept []Traffic, dropped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept = make([]Traffic, 0, len(r.kept))
	kept = append(kept, r.kept[r.next:]...)
	return append(kept, r.kept[:r.next]...), r.dropped
}
