package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// MaxMessage bounds one message the client reads, in bytes.
const MaxMessage = 16 << 20

// cancelNoteTimeout bounds the sending of a notification the client
// sends on its own (notifications/cancelled) and of an answer to the
// server's request, and the DELETE that ends an HTTP session.
const cancelNoteTimeout = 5 * time.Second

// httpConn is what the two HTTP transports share: the messages read, in
// order, and the end of the connection.
type httpConn struct {
	client *http.Client
	// life ends with the connection: the streams opened on it end too.
	life context.Context
	end  context.CancelFunc

	incoming chan *Message
	wg       sync.WaitGroup // the goroutines reading streams

	mu     sync.Mutex
	failed error // why the connection ended, when it did on its own
	ended  chan struct{}
	once   sync.Once
}

func newHTTPConn(client *http.Client) httpConn {
	if client == nil {
		client = http.DefaultClient
	}
	life, end := context.WithCancel(context.Background())
	return httpConn{client: client, life: life, end: end, incoming: make(chan *Message), ended: make(chan struct{})}
}

// fail ends the connection with err; the first error wins.
func (c *httpConn) fail(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.failed = err
		c.mu.Unlock()
		close(c.ended)
		c.end()
	})
}

// Read implements Conn.
func (c *httpConn) Read(ctx context.Context) (*Message, error) {
	select {
	case m := <-c.incoming:
		return m, nil
	case <-c.ended:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.failed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands the messages of one stream to Read; false once the
// connection ended.
func (c *httpConn) deliver(msgs ...*Message) bool {
	for _, m := range msgs {
		select {
		case c.incoming <- m:
		case <-c.ended:
			return false
		}
	}
	return true
}

// readStream reads a text/event-stream body, delivering its messages,
// and reports whether the stream ended by itself (not by the
// connection's end). Events that are not messages are skipped.
func (c *httpConn) readStream(body io.Reader) bool {
	// A stream that breaks ends like one that ended: the calls it
	// answered no more time out, or the connection's end fails them.
	_ = readEvents(body, MaxMessage, func(e event) bool {
		if e.name != "message" || len(bytes.TrimSpace(e.data)) == 0 {
			return true
		}
		msgs, err := DecodeBatch(e.data)
		if err != nil {
			return true // not a message of the protocol: skipped
		}
		return c.deliver(msgs...)
	})
	return c.life.Err() == nil
}

// StreamableHTTP is the streamable HTTP transport (basic/transports,
// "Streamable HTTP", since 2025-03-26): each message is POSTed to the
// endpoint, the answers come back as JSON or as an event stream, and a
// GET stream opened after the handshake carries what the server sends
// on its own (tools/list_changed).
type streamable struct {
	httpConn
	endpoint string

	hmu       sync.Mutex
	sessionID string
	version   string
	listening bool
}

// DialStreamableHTTP returns a connection to the MCP server at endpoint
// over the streamable HTTP transport. Nothing is sent before the first
// message.
func DialStreamableHTTP(endpoint string, client *http.Client) Conn {
	return &streamable{httpConn: newHTTPConn(client), endpoint: endpoint}
}

// headers sets the headers every request carries.
func (c *streamable) headers(req *http.Request) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.sessionID)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
}

// setProtocolVersion implements versioned: after the handshake every
// request names the version, and the server's own stream is opened.
func (c *streamable) setProtocolVersion(v string) {
	c.hmu.Lock()
	c.version = v
	listen := !c.listening
	c.listening = true
	c.hmu.Unlock()
	if listen {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.listen()
		}()
	}
}

// listen keeps the server's own stream (a GET) open while the
// connection lives, reopening it when it ends; a server without one
// (405) has none. A server that can no longer be reached at all has
// gone away: the connection ends.
func (c *streamable) listen() {
	var lost error
	defer func() {
		if lost != nil && c.life.Err() == nil {
			c.fail(fmt.Errorf("the server cannot be reached: %w", lost))
		}
	}()
	for tries := 0; tries < 3 && c.life.Err() == nil; tries++ {
		if tries > 0 {
			select {
			case <-time.After(time.Duration(tries) * 200 * time.Millisecond):
			case <-c.life.Done():
				return
			}
		}
		req, err := http.NewRequestWithContext(c.life, http.MethodGet, c.endpoint, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		c.headers(req)
		resp, err := c.client.Do(req)
		if err != nil {
			lost = err
			continue
		}
		lost = nil
		if resp.StatusCode == http.StatusNotFound && c.hasSession() {
			resp.Body.Close()
			c.fail(errors.New("the server ended the session (HTTP 404)"))
			return
		}
		if resp.StatusCode != http.StatusOK || !isEventStream(resp) {
			resp.Body.Close()
			return // the server has no stream of its own
		}
		opened := time.Now()
		open := c.readStream(resp.Body)
		resp.Body.Close()
		if time.Since(opened) > time.Second {
			tries = 0 // a stream that lived: reopen it as often as it ends
		}
		if !open {
			return
		}
	}
}

func (c *streamable) hasSession() bool {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	return c.sessionID != ""
}

// Write implements Conn: it POSTs m. The answers to a request are read
// in the background, from a JSON body or an event stream.
func (c *streamable) Write(ctx context.Context, m *Message) error {
	select {
	case <-c.ended:
		return ErrConnectionClosed
	default:
	}
	data, err := Encode(m)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	// The answers to a request are read with the connection's life (its
	// caller stops waiting when its context ends).
	rctx := ctx
	if !m.IsResponse() && !m.IsNotification() {
		rctx = c.life
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.endpoint, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.headers(req)
	resp, err := doBounded(ctx, c.client, req)
	if err != nil {
		return err
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && m.Method == "initialize" {
		c.hmu.Lock()
		c.sessionID = id
		c.hmu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && c.hasSession():
		resp.Body.Close()
		err := errors.New("the server ended the session (HTTP 404)")
		c.fail(err)
		return err
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("HTTP %s from %s: %s", resp.Status, c.endpoint, strings.TrimSpace(string(body)))
	case resp.StatusCode == http.StatusAccepted || m.IsResponse() || m.IsNotification():
		resp.Body.Close()
		return nil
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer resp.Body.Close()
		if isEventStream(resp) {
			c.readStream(resp.Body)
			return
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
		if err != nil || len(body) > MaxMessage {
			return
		}
		if msgs, err := DecodeBatch(body); err == nil {
			c.deliver(msgs...)
		}
	}()
	return nil
}

// doBounded sends req and waits for its response head at most until
// ctx ends (req itself may live longer, to read its body).
func doBounded(ctx context.Context, client *http.Client, req *http.Request) (*http.Response, error) {
	type got struct {
		resp *http.Response
		err  error
	}
	ch := make(chan got, 1)
	go func() {
		resp, err := client.Do(req)
		ch <- got{resp, err}
	}()
	select {
	case g := <-ch:
		return g.resp, g.err
	case <-ctx.Done():
		go func() {
			if g := <-ch; g.resp != nil {
				g.resp.Body.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Close implements Conn: it ends the session on the server (DELETE) and
// every stream.
func (c *streamable) Close() error {
	c.hmu.Lock()
	id := c.sessionID
	c.hmu.Unlock()
	if id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), cancelNoteTimeout)
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.endpoint, nil); err == nil {
			c.headers(req)
			if resp, err := c.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.fail(ErrConnectionClosed)
	c.wg.Wait()
	return nil
}

func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}

// sse is the HTTP with SSE transport of protocol revision 2024-11-05
// (basic/transports, "HTTP with SSE"): one event stream (a GET) carries
// every message of the server, and its first event, endpoint, names
// where the client POSTs its own.
type sse struct {
	httpConn
	post string // the URL messages are POSTed to
}

// DialSSE opens the event stream of the MCP server at endpoint and waits,
// at most until ctx ends, for the endpoint event. The stream lives until
// the connection is closed.
func DialSSE(ctx context.Context, endpoint string, client *http.Client) (Conn, error) {
	c := &sse{httpConn: newHTTPConn(client)}
	base, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("the server's URL: %w", err)
	}
	req, err := http.NewRequestWithContext(c.life, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := doBounded(ctx, c.client, req)
	if err != nil {
		c.end()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		c.end()
		return nil, fmt.Errorf("HTTP %s from %s: %s", resp.Status, endpoint, strings.TrimSpace(string(body)))
	}
	where := make(chan string, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer resp.Body.Close()
		got := false
		err := readEvents(resp.Body, MaxMessage, func(e event) bool {
			if !got {
				if e.name != "endpoint" {
					return true
				}
				got = true
				where <- string(bytes.TrimSpace(e.data))
				return true
			}
			if e.name != "message" {
				return true
			}
			msgs, err := DecodeBatch(e.data)
			if err != nil {
				return true
			}
			return c.deliver(msgs...)
		})
		if err == nil {
			err = io.EOF
		}
		c.fail(err)
	}()
	select {
	case p := <-where:
		u, err := base.Parse(p)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("the endpoint event %q: %w", p, err)
		}
		c.post = u.String()
		return c, nil
	case <-c.ended:
		c.wg.Wait()
		return nil, fmt.Errorf("the event stream ended before its endpoint event: %w", c.failed)
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
}

// Write implements Conn: it POSTs m to the endpoint the stream named.
func (c *sse) Write(ctx context.Context, m *Message) error {
	select {
	case <-c.ended:
		return ErrConnectionClosed
	default:
	}
	data, err := Encode(m)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.post, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("HTTP %s from %s: %s", resp.Status, c.post, strings.TrimSpace(string(body)))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return nil
}

// Close implements Conn.
func (c *sse) Close() error {
	c.fail(ErrConnectionClosed)
	c.wg.Wait()
	return nil
}
