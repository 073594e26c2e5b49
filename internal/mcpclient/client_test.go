package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests follow the protocol's revision 2025-11-25:
// https://modelcontextprotocol.io/specification/2025-11-25 (basic/lifecycle,
// basic/utilities/cancellation, basic/utilities/ping,
// basic/utilities/progress, server/tools, basic/transports).

// pipeConn is one end of an in-memory connection.
type pipeConn struct {
	in   chan *Message
	out  chan *Message
	done chan struct{}
	once *sync.Once
}

func newPipe() (client, server *pipeConn) {
	a, b := make(chan *Message, 16), make(chan *Message, 16)
	done, once := make(chan struct{}), &sync.Once{}
	return &pipeConn{in: a, out: b, done: done, once: once}, &pipeConn{in: b, out: a, done: done, once: once}
}

func (p *pipeConn) Read(ctx context.Context) (*Message, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeConn) Write(ctx context.Context, m *Message) error {
	// Through the wire form, as a transport would.
	data, err := Encode(m)
	if err != nil {
		return err
	}
	back, err := Decode(data)
	if err != nil {
		return err
	}
	select {
	case p.out <- back:
		return nil
	case <-p.done:
		return ErrConnectionClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeConn) Close() error { p.once.Do(func() { close(p.done) }); return nil }

// fakeServer answers the client's requests with serve, and records what
// it was sent.
type fakeServer struct {
	t     *testing.T
	conn  *pipeConn
	mu    sync.Mutex
	got   []*Message
	serve func(m *Message) (result any, err *Error)
	wg    sync.WaitGroup
}

func startServer(t *testing.T, conn *pipeConn, serve func(m *Message) (any, *Error)) *fakeServer {
	f := &fakeServer{t: t, conn: conn, serve: serve}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			m, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			f.mu.Lock()
			f.got = append(f.got, m)
			f.mu.Unlock()
			if m.IsResponse() || m.IsNotification() {
				continue
			}
			res, rerr := f.serve(m)
			if res == nil && rerr == nil {
				continue // not answered
			}
			reply := &Message{ID: m.ID, Error: rerr}
			if rerr == nil {
				reply.Result, _ = json.Marshal(res)
			}
			if conn.Write(context.Background(), reply) != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); f.wg.Wait() })
	return f
}

func (f *fakeServer) sent() []*Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Message(nil), f.got...)
}

func initResult(version string) map[string]any {
	return map[string]any{"protocolVersion": version, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo": map[string]any{"name": "fake", "version": "1.0"}}
}

func basic(version string) func(*Message) (any, *Error) {
	return func(m *Message) (any, *Error) {
		if m.Method == "initialize" {
			return initResult(version), nil
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no " + m.Method}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Lifecycle, "Version Negotiation": the client sends the latest version
// it supports; the server may answer another one, which the client
// accepts when it supports it; then the client sends
// notifications/initialized.
func TestInitializeNegotiatesTheVersion(t *testing.T) {
	for _, v := range Versions {
		c, s := newPipe()
		srv := startServer(t, s, basic(v))
		sess, err := Connect(context.Background(), c, Options{Client: Implementation{Name: "zot", Version: "test"}})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got := sess.InitializeResult(); got.ProtocolVersion != v || got.ServerInfo.Name != "fake" || got.Capabilities.Tools == nil {
			t.Fatalf("%s: initialize result %+v", v, got)
		}
		waitUntil(t, "notifications/initialized", func() bool { return len(srv.sent()) == 2 })
		sent := srv.sent()
		var params struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    map[string]any `json:"capabilities"`
			ClientInfo      Implementation `json:"clientInfo"`
		}
		if err := json.Unmarshal(sent[0].Params, &params); err != nil || sent[0].Method != "initialize" ||
			params.ProtocolVersion != LatestVersion || params.ClientInfo.Name != "zot" || params.Capabilities == nil {
			t.Fatalf("initialize sent %s %s (%v)", sent[0].Method, sent[0].Params, err)
		}
		if sent[1].Method != "notifications/initialized" || !sent[1].IsNotification() {
			t.Fatalf("second message %+v", sent[1])
		}
		sess.Close()
	}
}

// "If the client does not support the version in the server's response,
// it SHOULD disconnect."
func TestInitializeRefusesAnUnknownVersion(t *testing.T) {
	c, s := newPipe()
	startServer(t, s, basic("1999-01-01"))
	_, err := Connect(context.Background(), c, Options{})
	if err == nil || !strings.Contains(err.Error(), `"1999-01-01"`) {
		t.Fatalf("err = %v", err)
	}
	select {
	case <-c.done:
	default:
		t.Fatal("the connection was not closed")
	}
}

// Server/tools, "Listing Tools": the list is paginated by nextCursor.
func TestListToolsFollowsTheCursor(t *testing.T) {
	c, s := newPipe()
	srv := startServer(t, s, func(m *Message) (any, *Error) {
		switch m.Method {
		case "initialize":
			return initResult(LatestVersion), nil
		case "tools/list":
			var p struct{ Cursor string }
			json.Unmarshal(m.Params, &p)
			switch p.Cursor {
			case "":
				return map[string]any{"tools": []any{map[string]any{"name": "a", "inputSchema": map[string]any{"type": "object"}}, map[string]any{"name": ""}}, "nextCursor": "p2"}, nil
			case "p2":
				return map[string]any{"tools": []any{map[string]any{"name": "b", "annotations": map[string]any{"readOnlyHint": true}}}, "nextCursor": "p3"}, nil
			case "p3":
				return map[string]any{"tools": []any{map[string]any{"name": "c", "description": "the third"}}}, nil
			}
		}
		return nil, &Error{Code: -32602, Message: "bad cursor"}
	})
	sess, err := Connect(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	list, err := sess.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Name != "a" || string(list[0].InputSchema) != `{"type":"object"}` || !list[1].Annotations.ReadOnlyHint || list[2].Description != "the third" {
		t.Fatalf("tools %+v", list)
	}
	n := 0
	for _, m := range srv.sent() {
		if m.Method == "tools/list" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d tools/list requests", n)
	}
}

// A server whose cursor never ends does not keep the client listing.
func TestListToolsStopsAtARepeatedCursor(t *testing.T) {
	c, s := newPipe()
	startServer(t, s, func(m *Message) (any, *Error) {
		if m.Method == "initialize" {
			return initResult(LatestVersion), nil
		}
		return map[string]any{"tools": []any{map[string]any{"name": "a"}}, "nextCursor": "again"}, nil
	})
	sess, err := Connect(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.ListTools(context.Background()); err == nil || !strings.Contains(err.Error(), `"again" twice`) {
		t.Fatalf("err = %v", err)
	}
}

// Cancellation: "the party that wants to cancel a request sends a
// notifications/cancelled notification" naming its requestId; the
// request's answer is then ignored. Progress: the token goes in
// params._meta.progressToken and notifications/progress carry it.
func TestCallToolProgressAndCancellation(t *testing.T) {
	c, s := newPipe()
	var progress []ProgressParams
	var mu sync.Mutex
	srv := startServer(t, s, func(m *Message) (any, *Error) {
		switch m.Method {
		case "initialize":
			return initResult(LatestVersion), nil
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				Meta      struct {
					ProgressToken string `json:"progressToken"`
				} `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Name == "slow" {
				return nil, nil // never answered
			}
			note, _ := json.Marshal(map[string]any{"progressToken": p.Meta.ProgressToken, "progress": 1, "total": 2, "message": "half"})
			s.Write(context.Background(), &Message{Method: "notifications/progress", Params: note})
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "args " + string(p.Arguments)}}, "isError": true}, nil
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no"}
	})
	sess, err := Connect(context.Background(), c, Options{OnProgress: func(p ProgressParams) { mu.Lock(); progress = append(progress, p); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "echo", json.RawMessage(`{"x":1}`), "tok-1")
	if err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != `args {"x":1}` {
		t.Fatalf("result %+v, %v", res, err)
	}
	mu.Lock()
	if len(progress) != 1 || progress[0].ProgressToken != "tok-1" || progress[0].Total != 2 || progress[0].Message != "half" {
		t.Fatalf("progress %+v", progress)
	}
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := sess.CallTool(ctx, "slow", json.RawMessage(`{}`), ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow call: %v", err)
	}
	waitUntil(t, "notifications/cancelled", func() bool {
		sent := srv.sent()
		return sent[len(sent)-1].Method == "notifications/cancelled"
	})
	sent := srv.sent()
	var call, note *Message
	for _, m := range sent {
		if m.Method == "tools/call" {
			call = m
		}
		if m.Method == "notifications/cancelled" {
			note = m
		}
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal(note.Params, &p); err != nil || string(p.RequestID) != string(call.ID) || p.Reason == "" {
		t.Fatalf("cancelled %s for call %s", note.Params, call.ID)
	}
}

// Ping: "The receiver MUST respond promptly with an empty response." A
// request the client has no capability for is answered with an error;
// list_changed reaches OnToolsChanged.
func TestServerRequestsAndNotifications(t *testing.T) {
	c, s := newPipe()
	changed := make(chan struct{}, 1)
	srv := startServer(t, s, basic(LatestVersion))
	sess, err := Connect(context.Background(), c, Options{OnToolsChanged: func() { changed <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	s.Write(context.Background(), &Message{ID: json.RawMessage(`"p1"`), Method: "ping"})
	s.Write(context.Background(), &Message{ID: json.RawMessage(`7`), Method: "sampling/createMessage", Params: json.RawMessage(`{}`)})
	s.Write(context.Background(), &Message{Method: "notifications/tools/list_changed"})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed")
	}
	waitUntil(t, "the answers", func() bool {
		n := 0
		for _, m := range srv.sent() {
			if m.IsResponse() {
				n++
			}
		}
		return n == 2
	})
	for _, m := range srv.sent() {
		switch {
		case string(m.ID) == `"p1"` && (m.Error != nil || string(m.Result) != `{}`):
			t.Fatalf("ping answered %+v", m)
		case string(m.ID) == `7` && (m.Error == nil || m.Error.Code != CodeMethodNotFound):
			t.Fatalf("sampling answered %+v", m)
		}
	}
}

// A connection that ends fails the calls waiting and every later call
// with ErrConnectionClosed; Wait says why it ended.
func TestTheEndOfTheConnectionFailsCalls(t *testing.T) {
	c, s := newPipe()
	startServer(t, s, func(m *Message) (any, *Error) {
		if m.Method == "initialize" {
			return initResult(LatestVersion), nil
		}
		go s.Close() // the server goes away during the call
		return nil, nil
	})
	sess, err := Connect(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.CallTool(context.Background(), "x", json.RawMessage(`{}`), ""); !errors.Is(err, ErrConnectionClosed) || !errors.Is(err, io.EOF) {
		t.Fatalf("call: %v", err)
	}
	if err := sess.Wait(); !errors.Is(err, io.EOF) {
		t.Fatalf("wait: %v", err)
	}
	if _, err := sess.CallTool(context.Background(), "x", json.RawMessage(`{}`), ""); !errors.Is(err, ErrConnectionClosed) {
		t.Fatalf("later call: %v", err)
	}
}

// Server/tools, "Tool Result": text, image (base64 data), audio,
// resource and resource_link content; a type the client does not know
// is kept whole.
func TestContentTypes(t *testing.T) {
	var res CallToolResult
	err := json.Unmarshal([]byte(`{"content":[
		{"type":"text","text":"hi"},
		{"type":"image","data":"aGVsbG8=","mimeType":"image/png"},
		{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"body"}},
		{"type":"resource_link","uri":"file:///b","name":"b","description":"the b"},
		{"type":"hologram","depth":3}
	],"structuredContent":{"n":1}}`), &res)
	if err != nil {
		t.Fatal(err)
	}
	cs := res.Content
	if len(cs) != 5 || cs[0].Text != "hi" || string(cs[1].Data) != "hello" || cs[1].MIMEType != "image/png" ||
		cs[2].Resource.Text != "body" || cs[3].URI != "file:///b" || cs[3].Description != "the b" ||
		cs[4].Type != "hologram" || !strings.Contains(string(cs[4].Raw), `"depth":3`) || string(res.StructuredContent) != `{"n":1}` {
		t.Fatalf("%+v", res)
	}
}

func TestDecodeRefusesWhatIsNotAMessage(t *testing.T) {
	for _, in := range []string{`{}`, `{"jsonrpc":"1.0","method":"m"}`, `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":{},"result":1}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, `[]`, `{"jsonrpc":"2.0","id":1,"result":{oops`} {
		if _, err := DecodeBatch([]byte(in)); err == nil {
			t.Errorf("%s decoded", in)
		}
	}
	msgs, err := DecodeBatch([]byte(` [{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","id":"a","result":null}]`))
	if err != nil || len(msgs) != 2 || !msgs[0].IsNotification() || !msgs[1].IsResponse() || string(msgs[1].Result) != "null" {
		t.Fatalf("%+v %v", msgs, err)
	}
}
