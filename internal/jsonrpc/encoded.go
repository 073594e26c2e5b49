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
	err := c.out.sendFuncs(ctx, n, func(i int) int { return FrameOverhead + len(method) + size(i) }, func(b []byte, i int) []byte {
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
