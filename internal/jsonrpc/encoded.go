package jsonrpc

import (
	"context"
	"fmt"

	"zot.dev/zot/internal/wirecodec"
)

// Encoded is a payload (Notify's or Call's params, a Result's value) its
// maker already encoded as compact, valid JSON: it goes on the wire as is,
// without the check and compaction a json.RawMessage gets. It is for
// frames a server sends by the thousand (text chunks of an answer) and
// encodes itself; bytes that are not compact valid JSON break the stream.
type Encoded []byte

// Frame is a whole notification, encoded once (NotificationFrame) and
// sent as is by Conn.Send, to one connection or to many: the frames a
// server sends by the thousand cost one buffer each, not a payload and a
// frame per connection. Like Encoded, it must be compact, valid JSON.
type Frame []byte

// NotificationFrame returns the frame of a notification of method whose
// params appendParams appends to the buffer it is given: exactly one
// compact JSON value, which is not checked. size is a guess of the
// params' length, so the frame is allocated once.
func NotificationFrame(method string, size int, appendParams func([]byte) []byte) Frame {
	return AppendNotification(make([]byte, 0, FrameOverhead+len(method)+size), method, appendParams)
}

// FrameOverhead is what a notification frame holds besides its method
// and params, for sizing buffers.
const FrameOverhead = 40

// AppendNotification appends to b the frame of a notification of method
// whose params appendParams appends (as NotificationFrame), and returns
// the extended buffer: the frame is its tail from len(b) on. A sender
// that makes many frames at once can carve them out of one buffer.
func AppendNotification(b []byte, method string, appendParams func([]byte) []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = wirecodec.AppendString(b, method)
	b = append(b, `,"params":`...)
	b = appendParams(b)
	return append(b, '}')
}

// SendNotification queues a notification of method whose params
// appendParams appends (exactly one compact JSON value, not checked),
// encoded straight into the connection's outgoing queue: nothing is
// allocated for it. appendParams runs with the queue locked, so it must
// only append. size is a guess of the params' length. It waits while the
// queue is full, until ctx ends, as Notify does.
func (c *Conn) SendNotification(ctx context.Context, method string, size int, appendParams func([]byte) []byte) error {
	err := c.out.sendFunc(ctx, FrameOverhead+len(method)+size, func(b []byte) []byte {
		return AppendNotification(b, method, appendParams)
	})
	if err != nil {
		return fmt.Errorf("notification %s: %w", method, err)
	}
	return nil
}

// SendNotifications is SendNotification for n notifications of method in
// a row, the params of the i-th appended by appendParams(b, i), about
// size(i) bytes: they are queued under one lock as far as they fit.
func (c *Conn) SendNotifications(ctx context.Context, method string, n int, size func(i int) int, appendParams func(b []byte, i int) []byte) error {
	err := c.out.sendFuncs(ctx, true, n, func(i int) int { return FrameOverhead + len(method) + size(i) }, func(b []byte, i int) []byte {
		return AppendNotification(b, method, func(b []byte) []byte { return appendParams(b, i) })
	})
	if err != nil {
		return fmt.Errorf("notification %s: %w", method, err)
	}
	return nil
}

// Send queues a frame NotificationFrame made. It waits while the
// outgoing queue is full, until ctx ends, as Notify does. The frame is
// not changed and may be sent on other connections too.
func (c *Conn) Send(ctx context.Context, f Frame) error {
	if err := c.out.send(ctx, f); err != nil {
		return fmt.Errorf("notification: %w", err)
	}
	return nil
}

// NotificationHead returns the bytes a notification frame of method
// begins with, up to its params: a frame is the head, the params (one
// compact JSON value) and a closing '}'. A sender that makes the same
// kind of frame by the thousand makes its head once (see PostFunc).
func NotificationHead(method string) []byte {
	f := AppendNotification(nil, method, func(b []byte) []byte { return b })
	return f[:len(f)-1]
}

// Post queues f without waiting. Past the outgoing queue's bound it is
// queued all the same, up to a few times the bound; a client that falls
// further behind is dropped (ErrStalled), and with it only its own
// connection. It is for a server that hands one stream of frames to
// several connections, each with its own queue, and waits for room
// (Ready) only where its producer should be slowed down.
func (c *Conn) Post(f Frame) error {
	if err := c.out.sendFuncs(context.Background(), false, 1, func(int) int { return len(f) }, func(b []byte, _ int) []byte { return append(b, f...) }); err != nil {
		return fmt.Errorf("notification: %w", err)
	}
	return nil
}

// PostFunc is Post for the whole frame appendFrame appends to the
// queue's buffer: one compact JSON-RPC message without its LF, not
// checked (NotificationHead, the params and '}'), about size bytes. It
// runs with the queue locked, so it must only append.
func (c *Conn) PostFunc(size int, appendFrame func([]byte) []byte) error {
	if err := c.out.sendFuncs(context.Background(), false, 1, func(int) int { return size }, func(b []byte, _ int) []byte { return appendFrame(b) }); err != nil {
		return fmt.Errorf("notification: %w", err)
	}
	return nil
}

// Ready waits until the outgoing queue has room for a frame, the
// connection ends, or ctx ends: the wait of a producer that then posts
// (Post). A client that reads nothing while its queue stays full is
// dropped after the stall timeout, which ends the wait.
func (c *Conn) Ready(ctx context.Context) { _ = c.out.ready(ctx) }

// Behind reports whether the outgoing queue is past its bound: the
// client is not keeping up, and what may be dropped (a redraw, a
// notice) is better not sent to it.
func (c *Conn) Behind() bool {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.fullLocked(1)
}
