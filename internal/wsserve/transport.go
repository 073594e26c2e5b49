package wsserve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coder/websocket"

	"zot.dev/zot/internal/jsonrpc"
)

// The close codes zot sends (RFC 6455 §7.4.1).
const (
	// CloseNormal: the daemon ended the connection (a client's own
	// close is answered with its code).
	CloseNormal = websocket.StatusNormalClosure // 1000
	// CloseGoingAway: the daemon stops.
	CloseGoingAway = websocket.StatusGoingAway // 1001
	// CloseProtocolError: the first message was not initialize.
	CloseProtocolError = websocket.StatusProtocolError // 1002
	// CloseUnsupportedData: a binary frame; ACP messages are text.
	CloseUnsupportedData = websocket.StatusUnsupportedData // 1003
	// ClosePolicyViolation: no message within the handshake deadline,
	// or no pong within the keepalive timeout.
	ClosePolicyViolation = websocket.StatusPolicyViolation // 1008
	// CloseTooBig: a message over the size limit (sent by the library,
	// which stops reading it at the limit).
	CloseTooBig = websocket.StatusMessageTooBig // 1009
)

// closeWait bounds the closing handshake: a peer that does not answer
// our close frame (or does not read it) is dropped after it.
const closeWait = time.Second

// transport is one WebSocket connection as a jsonrpc.Transport: one
// JSON-RPC message per text message.
type transport struct {
	ws       *websocket.Conn
	nc       *corkConn          // the connection under ws: batching, the closing deadline
	unsent   func() (int, bool) // the kernel's unsent bytes of the TCP connection; nil when unknown
	done     func()             // called once when the transport is closed (the server's count)
	stopping chan struct{}      // closed when the server stops: Close then says 1001

	// first is set once the first message was read (it had to be
	// initialize); the watcher's handshake deadline ends then.
	first    chan struct{}
	sawFirst bool // reader only

	ctx    context.Context // ends when the transport is closed
	cancel context.CancelFunc
	watch  sync.WaitGroup

	closeMu   sync.Mutex
	closed    bool
	closeCode websocket.StatusCode
	closeWhy  string
}

// limits are the timing rules of a connection.
type limits struct {
	handshake time.Duration // the first message must arrive within it
	ping      time.Duration // a ping this often; no pong within it ends the connection
}

func newTransport(ws *websocket.Conn, nc *corkConn, lim limits, stopping chan struct{}, done func()) *transport {
	t := &transport{ws: ws, nc: nc, done: done, stopping: stopping, first: make(chan struct{})}
	raw := nc.Conn
	if tc, ok := raw.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	t.unsent = jsonrpc.UnsentProbe(raw)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.watch.Add(1)
	go t.watcher(lim)
	return t
}

// watcher closes a connection whose first message does not come within
// the handshake deadline, and pings the peer: a ping not answered within
// the interval ends the connection (a half-open peer, a dead network).
func (t *transport) watcher(lim limits) {
	defer t.watch.Done()
	deadline := time.NewTimer(lim.handshake)
	defer deadline.Stop()
	select {
	case <-t.first:
		deadline.Stop()
	case <-deadline.C:
		t.closeWith(ClosePolicyViolation, fmt.Sprintf("no initialize within %v", lim.handshake))
		return
	case <-t.ctx.Done():
		return
	}
	if lim.ping <= 0 {
		return
	}
	tick := time.NewTicker(lim.ping)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(t.ctx, lim.ping)
		err := t.ws.Ping(ctx)
		cancel()
		if err != nil {
			if t.ctx.Err() == nil {
				t.closeWith(ClosePolicyViolation, fmt.Sprintf("no pong within %v", lim.ping))
			}
			return
		}
	}
}

// errClientClosed is why a connection the client closed ended.
var errClientClosed = errors.New("the client closed the connection")

// closeReasonOf returns the reason of a close frame in err.
func closeReasonOf(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

// errBinary ends a connection that sent a binary message.
var errBinary = errors.New("the client sent a binary message; ACP messages are text (closed with 1003)")

// errNotInitialize ends a connection whose first message was not
// initialize.
var errNotInitialize = errors.New("the client's first message was not initialize (closed with 1002)")

func (t *transport) Read(ctx context.Context) ([]byte, error) {
	// The connection's own context ends only when it is closed, which
	// Close does too: reading without one spares a timer per message.
	typ, msg, err := t.ws.Read(context.Background())
	if err != nil {
		if code := websocket.CloseStatus(err); code != -1 {
			// A WebSocket has no half-close: a client that closed can
			// take no answer, so this ends the connection as a failure
			// would (its requests' contexts end; its turns go on).
			return nil, fmt.Errorf("%w (%d %s)", errClientClosed, code, closeReasonOf(err))
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w without a close frame", errClientClosed)
		}
		if errors.Is(err, websocket.ErrMessageTooBig) {
			return nil, fmt.Errorf("a message over the size limit (closed with 1009): %w", err)
		}
		if t.ctx.Err() != nil {
			if why := t.closeReason(); why != "" {
				return nil, errors.New(why)
			}
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		t.closeWith(CloseUnsupportedData, "binary frames are not accepted: send each JSON-RPC message as a text message")
		return nil, errBinary
	}
	if !t.sawFirst {
		t.sawFirst = true
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(msg, &head) != nil || head.Method != "initialize" || len(head.ID) == 0 || string(head.ID) == "null" {
			t.closeWith(CloseProtocolError, "the first message must be the initialize request, with an id")
			return nil, errNotInitialize
		}
		close(t.first)
	}
	return msg, nil
}

// Write sends each message of b as a text message; the frames are held
// and leave together (in pieces of 64 KiB for a large batch, each
// counted as the client's progress), as the socket writes a batch.
func (t *transport) Write(ctx context.Context, b *jsonrpc.Batch) error {
	t.nc.cork(b.Progress)
	for i := range b.Len() {
		// As Read: Close ends a Write that waits.
		if err := t.ws.Write(context.Background(), websocket.MessageText, b.Message(i)); err != nil {
			_ = t.nc.uncork()
			return err
		}
	}
	return t.nc.uncork()
}

// Unread says how many bytes written the client has not taken yet, as
// the kernel holds them (its TCP send queue): the same look at a slow
// client's progress that the Unix socket gets (jsonrpc.Transport).
func (t *transport) Unread() (int, bool) {
	if t.unsent == nil {
		return 0, false
	}
	return t.unsent()
}

// Close ends the connection with a close frame (1000, or the code of the
// violation that ended it; 1001 when the server stops), waiting at most
// closeWait for the peer's answer.
func (t *transport) Close() error {
	select {
	case <-t.stopping:
		t.goingAway()
	default:
		t.closeWith(CloseNormal, "")
	}
	t.watch.Wait()
	return nil
}

// goingAway closes the connection because the server stops.
func (t *transport) goingAway() { t.closeWith(CloseGoingAway, "the daemon is stopping") }

// closeWith closes the connection with code and reason, once: the first
// caller's code is sent.
func (t *transport) closeWith(code websocket.StatusCode, reason string) {
	t.closeMu.Lock()
	if t.closed {
		t.closeMu.Unlock()
		return
	}
	t.closed, t.closeCode, t.closeWhy = true, code, reason
	t.closeMu.Unlock()
	t.cancel()
	// Bounds the closing handshake, and a write stuck on a peer that
	// reads nothing.
	_ = t.nc.SetDeadline(time.Now().Add(closeWait))
	_ = t.ws.Close(code, reason)
	if t.done != nil {
		t.done()
	}
}

// closeReason says why zot closed the connection, "" when it did not or
// closed it normally.
func (t *transport) closeReason() string {
	t.closeMu.Lock()
	defer t.closeMu.Unlock()
	if !t.closed || t.closeCode == CloseNormal {
		return ""
	}
	return fmt.Sprintf("closed with %d: %s", t.closeCode, t.closeWhy)
}
