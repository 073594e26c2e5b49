package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// client is the test's end of a connection.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func (cl *client) send(line string) {
	cl.t.Helper()
	if _, err := io.WriteString(cl.conn, line+"\n"); err != nil {
		cl.t.Fatalf("writing %q: %v", line, err)
	}
}

// frame is any incoming message, loosely decoded.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	raw    string
}

func (cl *client) next() frame {
	cl.t.Helper()
	_ = cl.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := cl.r.ReadString('\n')
	if err != nil {
		cl.t.Fatalf("reading a frame: %v", err)
	}
	var f frame
	if err := json.Unmarshal([]byte(line), &f); err != nil {
		cl.t.Fatalf("frame %q: %v", line, err)
	}
	var env map[string]json.RawMessage
	_ = json.Unmarshal([]byte(line), &env)
	if string(env["jsonrpc"]) != `"2.0"` {
		cl.t.Fatalf("frame without jsonrpc 2.0: %s", line)
	}
	f.raw = strings.TrimSpace(line)
	return f
}

// testHandler serves the methods the tests use.
func testHandler(ctx context.Context, c *Conn, req *Request) Reply {
	switch req.Method {
	case "echo":
		return Result(req.Params)
	case "need":
		var p struct {
			Name *string `json:"name"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == nil {
			return Fail(InvalidParams("name", "is required and must be a string"))
		}
		return Result(map[string]string{"hello": *p.Name})
	case "stream":
		var p struct{ N int }
		_ = json.Unmarshal(req.Params, &p)
		return Async(func(ctx context.Context) (any, error) {
			for i := range p.N {
				if err := c.Notify(ctx, "update", map[string]int{"i": i}); err != nil {
					return nil, err
				}
			}
			return map[string]int{"sent": p.N}, nil
		})
	case "block":
		return Async(func(ctx context.Context) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	case "ask":
		return Async(func(ctx context.Context) (any, error) {
			return c.Call(ctx, "client/question", map[string]string{"q": "why"})
		})
	case "panic":
		panic("boom")
	}
	if req.IsNotification() {
		return Result(nil)
	}
	return Fail(MethodNotFound(req.Method))
}

func serve(t *testing.T, h Handler, opts Options) (*client, *Conn) {
	t.Helper()
	return serveLines(t, h, opts, 0)
}

// serveLines is serve with lines of up to maxLine bytes.
func serveLines(t *testing.T, h Handler, opts Options, maxLine int) (*client, *Conn) {
	t.Helper()
	a, b := net.Pipe()
	c := NewConn(NDJSON(a, maxLine), Peer{Transport: "pipe"}, Static(h), opts)
	t.Cleanup(func() {
		_ = b.Close()
		_ = c.Close()
		_ = c.Wait()
	})
	return &client{t: t, conn: b, r: bufio.NewReader(b)}, c
}

func TestErrorsAnsweredAndNextLineServed(t *testing.T) {
	cl, _ := serveLines(t, HandlerFunc(testHandler), Options{}, 256)
	cases := []struct {
		line string
		id   string
		code int64
		kind string
	}{
		{`{not json`, "null", CodeParseError, KindMalformedJSON},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\xff\"}", "null", CodeParseError, KindInvalidUTF8},
		{`42`, "null", CodeInvalidRequest, KindInvalidRequest},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, "null", CodeInvalidRequest, KindInvalidRequest},
		{`{"id":2,"method":"echo"}`, "2", CodeInvalidRequest, KindInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`, "null", CodeInvalidRequest, KindInvalidRequest},
		{`{"jsonrpc":"2.0","id":3}`, "3", CodeInvalidRequest, KindInvalidRequest},
		{`{"jsonrpc":"2.0","id":4,"method":7}`, "4", CodeInvalidRequest, KindInvalidRequest},
		{`{"jsonrpc":"2.0","id":5,"Method":"echo"}`, "5", CodeInvalidRequest, KindInvalidRequest},
		{`{"jsonrpc":"2.0","id":6,"method":"echo","params":3}`, "6", CodeInvalidParams, KindInvalidParams},
		{`{"jsonrpc":"2.0","id":"s7","method":"nope"}`, `"s7"`, CodeMethodNotFound, KindUnknownMethod},
		{`{"jsonrpc":"2.0","id":8,"method":"need","params":{"name":1}}`, "8", CodeInvalidParams, KindInvalidParams},
		{`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`, "null", CodeInvalidRequest, KindLineTooLong},
		{`{"jsonrpc":"2.0","id":10,"method":"panic"}`, "10", CodeInternal, KindInternal},
	}
	for _, tc := range cases {
		cl.send(tc.line)
		f := cl.next()
		if f.Error == nil || string(f.ID) != tc.id || f.Error.Code != tc.code || f.Error.Kind != tc.kind {
			t.Errorf("%.60s: got %s, want id %s code %d kind %s", tc.line, f.raw, tc.id, tc.code, tc.kind)
		}
		if !strings.Contains(f.raw, `"retryable":false`) {
			t.Errorf("%.60s: no data.retryable in %s", tc.line, f.raw)
		}
		// The next line is served.
		cl.send(`{"jsonrpc":"2.0","id":"after","method":"echo","params":["ok"]}`)
		if f := cl.next(); string(f.ID) != `"after"` || string(f.Result) != `["ok"]` {
			t.Fatalf("after %.60s: got %s", tc.line, f.raw)
		}
	}
	// The field is named.
	cl.send(`{"jsonrpc":"2.0","id":11,"method":"need","params":{}}`)
	if f := cl.next(); f.Error == nil || f.Error.Data["field"] != "name" {
		t.Errorf("invalid params names no field: %s", f.raw)
	}
	// Notifications are never answered, even unknown or malformed ones:
	// the next frame is the answer to the request after them.
	cl.send(`{"jsonrpc":"2.0","method":"nope"}`)
	cl.send(`{"jsonrpc":"2.0","method":"echo","params":1}`)
	cl.send(`{"jsonrpc":"2.0","id":12,"method":"echo"}`)
	if f := cl.next(); string(f.ID) != "12" || string(f.Result) != "null" {
		t.Errorf("after notifications: got %s", f.raw)
	}
}

func TestUpdatesPrecedeTheAnswer(t *testing.T) {
	cl, _ := serve(t, HandlerFunc(testHandler), Options{})
	cl.send(`{"jsonrpc":"2.0","id":1,"method":"stream","params":{"N":500}}`)
	for i := range 500 {
		f := cl.next()
		var p struct{ I int }
		if f.Method != "update" || json.Unmarshal(f.Params, &p) != nil || p.I != i {
			t.Fatalf("frame %d: %s", i, f.raw)
		}
	}
	if f := cl.next(); string(f.ID) != "1" || string(f.Result) != `{"sent":500}` {
		t.Fatalf("answer: %s", f.raw)
	}
}

func TestNotificationsInOrderAfterEarlierRequests(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := HandlerFunc(func(ctx context.Context, c *Conn, req *Request) Reply {
		mu.Lock()
		seen = append(seen, req.Method+string(req.Params))
		mu.Unlock()
		if req.Method == "slow" {
			return Async(func(ctx context.Context) (any, error) { return "done", nil })
		}
		return Result(nil)
	})
	cl, _ := serve(t, h, Options{})
	var want []string
	for i := range 50 {
		cl.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"slow","params":[%d]}`, i, i))
		cl.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"cancel","params":[%d]}`, i))
		want = append(want, fmt.Sprintf("slow[%d]", i), fmt.Sprintf("cancel[%d]", i))
	}
	// A request answered at once, last: its answer comes once every
	// line before it was handled (slow[49]'s answer may come before
	// cancel[49] was).
	cl.send(`{"jsonrpc":"2.0","id":"last","method":"last"}`)
	want = append(want, "last")
	for f := cl.next(); string(f.ID) != `"last"`; f = cl.next() {
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Fatalf("handled out of order:\n%v", seen)
	}
}

func TestCallToTheClient(t *testing.T) {
	cl, _ := serve(t, HandlerFunc(testHandler), Options{})
	// Answered.
	cl.send(`{"jsonrpc":"2.0","id":1,"method":"ask"}`)
	q := cl.next()
	if q.Method != "client/question" || string(q.Params) != `{"q":"why"}` || len(q.ID) == 0 {
		t.Fatalf("call: %s", q.raw)
	}
	cl.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"because":true}}`, q.ID))
	if f := cl.next(); string(f.ID) != "1" || string(f.Result) != `{"because":true}` {
		t.Fatalf("answer: %s", f.raw)
	}
	// An error answer reaches the caller as *Error, kind and all.
	cl.send(`{"jsonrpc":"2.0","id":2,"method":"ask"}`)
	q = cl.next()
	cl.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"no","data":{"kind":"refused","retryable":true}}}`, q.ID))
	if f := cl.next(); f.Error == nil || f.Error.Code != -32001 || f.Error.Kind != "refused" || !f.Error.Retryable {
		t.Fatalf("error answer: %s", f.raw)
	}
	// Answers to unknown ids, and malformed answers, are dropped silently.
	cl.send(`{"jsonrpc":"2.0","id":"zot-999","result":1}`)
	cl.send(`{"jsonrpc":"2.0","id":"zot-1","result":1,"error":{"code":1,"message":"x"}}`)
	// A client cancelling the request that waits for its answer: the call
	// is told to stop ($/cancel_request goes to the client) and the request
	// answers -32800.
	cl.send(`{"jsonrpc":"2.0","id":3,"method":"ask"}`)
	q = cl.next()
	cl.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}`)
	f := cl.next()
	if f.Method != "$/cancel_request" || string(f.Params) != fmt.Sprintf(`{"requestId":%s}`, q.ID) {
		t.Fatalf("want $/cancel_request for %s, got %s", q.ID, f.raw)
	}
	if f := cl.next(); string(f.ID) != "3" || f.Error == nil || f.Error.Code != CodeCancelled || f.Error.Kind != KindCancelled {
		t.Fatalf("cancelled request: %s", f.raw)
	}
}

func TestDuplicateIDRefused(t *testing.T) {
	cl, _ := serve(t, HandlerFunc(testHandler), Options{})
	cl.send(`{"jsonrpc":"2.0","id":7,"method":"block"}`)
	cl.send(`{"jsonrpc":"2.0","id":7,"method":"echo"}`)
	if f := cl.next(); string(f.ID) != "7" || f.Error == nil || f.Error.Code != CodeInvalidRequest {
		t.Fatalf("duplicate id: %s", f.raw)
	}
	cl.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}`)
	if f := cl.next(); string(f.ID) != "7" || f.Error == nil || f.Error.Code != CodeCancelled {
		t.Fatalf("cancelled: %s", f.raw)
	}
}

// halfClosed is a stream whose input ends after what was written to
// it, while its output stays open until the Conn closes it.
type halfClosed struct {
	io.Reader
	*io.PipeWriter
}

func (h halfClosed) Close() error { return h.PipeWriter.Close() }

func TestHalfCloseStillAnswers(t *testing.T) {
	pr, pw := io.Pipe()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"stream","params":{"N":3}}` + "\n")
	c := NewConn(NDJSON(halfClosed{in, pw}, 0), Peer{Transport: "pipe"}, Static(HandlerFunc(testHandler)), Options{})
	out, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || !strings.Contains(lines[3], `"result":{"sent":3}`) {
		t.Fatalf("after the end of input, got %q", lines)
	}
}

func TestClientThatDoesNotReadIsDropped(t *testing.T) {
	opts := Options{QueueFrames: 4, StallTimeout: 100 * time.Millisecond}
	cl, c := serve(t, HandlerFunc(testHandler), opts)
	cl.send(`{"jsonrpc":"2.0","id":1,"method":"stream","params":{"N":100000}}`)
	// The test never reads: the writer blocks in its first write, the
	// queue fills, and the client is let go.
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("a client that reads nothing was kept")
	}
	if err := c.Err(); !errors.Is(err, ErrStalled) {
		t.Fatalf("Err = %v, want ErrStalled", err)
	}
}

func TestTooManyRequestsRefused(t *testing.T) {
	cl, _ := serve(t, HandlerFunc(testHandler), Options{MaxInFlight: 3})
	for i := range 3 {
		cl.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block"}`, i))
	}
	cl.send(`{"jsonrpc":"2.0","id":"over","method":"block"}`)
	f := cl.next()
	if string(f.ID) != `"over"` || f.Error == nil || f.Error.Code != CodeTooManyRequests || f.Error.Kind != KindTooManyRequests || !f.Error.Retryable {
		t.Fatalf("over the limit: %s", f.raw)
	}
	// Notifications still get through ($/cancel_request here), and a
	// finished job makes room.
	cl.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}`)
	if f := cl.next(); string(f.ID) != "0" || f.Error == nil || f.Error.Code != CodeCancelled {
		t.Fatalf("cancelled job: %s", f.raw)
	}
	cl.send(`{"jsonrpc":"2.0","id":"again","method":"stream","params":{"N":0}}`)
	if f := cl.next(); string(f.ID) != `"again"` || f.Error != nil {
		t.Fatalf("after room was made: %s", f.raw)
	}
}

// A call tells the caller whether its request could have reached the
// client: ErrNotSent when the connection had ended before it was queued,
// not when the client left after it was sent without answering.
func TestCallSaysWhetherTheRequestWasSent(t *testing.T) {
	server, client := net.Pipe()
	c := NewConn(NDJSON(server, 0), Peer{Transport: "pipe"}, Static(HandlerFunc(testHandler)), Options{})
	got := make(chan struct{})
	go func() {
		defer close(got)
		line, _ := bufio.NewReader(client).ReadString('\n')
		if !strings.Contains(line, `"method":"ask"`) {
			t.Errorf("the client read %q", line)
		}
		client.Close() // leaves without answering
	}()
	_, err := c.Call(context.Background(), "ask", nil)
	<-got
	if !errors.Is(err, ErrClosed) || errors.Is(err, ErrNotSent) {
		t.Errorf("a call the client read, then left: %v; want ErrClosed without ErrNotSent", err)
	}
	_ = c.Wait()
	_, err = c.Call(context.Background(), "ask", nil)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, ErrNotSent) {
		t.Errorf("a call after the end: %v; want ErrClosed and ErrNotSent", err)
	}
}
