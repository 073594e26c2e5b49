package tap

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// byMethod returns the records of a snapshot whose method and role are
// those given.
func find(recs []*Record, method, role string) []*Record {
	var out []*Record
	for _, r := range recs {
		if r.Method == method && r.Role == role {
			out = append(out, r)
		}
	}
	return out
}

// An ACP connection tapped through jsonrpc.Options.Tap: each message
// both ways, with its session, its answer paired with its request and
// timed, and each checked against ACP's schema when read.
func TestACPFramesOverAPipe(t *testing.T) {
	tp := New(Options{})
	a, b := jsonrpc.NewPipe()
	handler := jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
		switch req.Method {
		case "session/prompt":
			for _, text := range []string{"Hel", "lo"} {
				_ = c.Notify(ctx, "session/update", map[string]any{"sessionId": "s1", "update": map[string]any{
					"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}})
			}
			return jsonrpc.Result(map[string]any{"stopReason": "end_turn"})
		}
		return jsonrpc.Fail(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method_not_found", "no %s", req.Method))
	})
	server := jsonrpc.NewConn(a, jsonrpc.Peer{Transport: "memory", Label: "test pipe"}, jsonrpc.Static(handler), jsonrpc.Options{Tap: tp.JSONRPC})
	client := jsonrpc.NewConn(b, jsonrpc.Peer{Transport: "memory"}, jsonrpc.Static(jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Conn, *jsonrpc.Request) jsonrpc.Reply {
		return jsonrpc.Result(nil)
	})), jsonrpc.Options{})
	ctx := context.Background()
	if _, err := client.Call(ctx, "session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}); err != nil {
		t.Fatal(err)
	}
	// A prompt whose sessionId is a number breaks ACP's schema.
	_, _ = client.Call(ctx, "session/prompt", map[string]any{"sessionId": 7, "prompt": []any{}})
	_ = client.Close()
	_ = client.Wait()
	_ = server.Wait()

	snap := tp.Snapshot("s1", false)
	reqs := find(snap.Records, "session/prompt", "request")
	resps := find(snap.Records, "session/prompt", "response")
	chunks := find(snap.Records, "session/update", "notification")
	if len(reqs) != 1 || len(resps) != 1 || len(chunks) != 4 {
		t.Fatalf("session s1 holds %d requests, %d answers, %d updates; want 1, 1, 4 (each prompt's two): %+v", len(reqs), len(resps), len(chunks), snap.Records)
	}
	req, resp := reqs[0], resps[0]
	if req.Dir != "in" || resp.Dir != "out" || req.Door != DoorACP || req.Conn == "" || resp.Conn != req.Conn {
		t.Errorf("request %+v, answer %+v: want in and out on one ACP connection", req, resp)
	}
	if resp.Pair != req.Seq || resp.Ms < 0 || resp.Ms > float64(time.Minute.Milliseconds()) || resp.Session != "s1" {
		t.Errorf("answer pairs with %d after %v ms in %q; want request %d", resp.Pair, resp.Ms, resp.Session, req.Seq)
	}
	for _, r := range []*Record{req, resp, chunks[0], chunks[1]} {
		if r.Valid != "ok" {
			t.Errorf("%s %s: schema %q (%s), want ok", r.Method, r.Role, r.Valid, r.Problem)
		}
	}
	if chunks[0].Update != "agent_message_chunk" || chunks[0].Size == 0 {
		t.Errorf("update %+v: want its sessionUpdate and size", chunks[0])
	}
	var bad *Record
	for _, r := range tp.Snapshot("", true).Records {
		if r.Method == "session/prompt" && r.Role == "request" && r.Session == "" {
			bad = r
		}
	}
	if bad == nil || bad.Valid != "bad" || !strings.Contains(bad.Problem, "sessionId") {
		t.Errorf("the request with a numeric sessionId: %+v, want it marked bad, naming sessionId", bad)
	}
	if len(snap.Connections) != 1 || snap.Connections[0].Label != "test pipe" || snap.Connections[0].Ended.IsZero() || snap.Connections[0].FramesIn != 2 {
		t.Errorf("connections %+v: want the one, ended, with 2 frames in", snap.Connections)
	}
}

// Each session's ring keeps its bound of records and bytes, and the
// rings of the sessions written longest ago go past MaxSessions.
func TestRingsAreBounded(t *testing.T) {
	tp := New(Options{PerSession: 3, MaxSessions: 2, PerSessionBytes: 1 << 20, MaxFrameBytes: 100})
	c := tp.Conn(DoorACP, "memory", "x")
	for i := range 10 {
		c.Frame(true, time.Now(), fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"a","n":%d}}`, i))
	}
	snap := tp.Snapshot("a", false)
	if len(snap.Records) != 3 || snap.Sessions[0].LetGo != 7 || !strings.Contains(string(snap.Records[2].Frame), `"n":9`) {
		t.Fatalf("kept %d, let go %v; want the last 3 of 10", len(snap.Records), snap.Sessions)
	}
	long := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"b","pad":"` + strings.Repeat("x", 200) + `"}}`
	c.Frame(true, time.Now(), []byte(long))
	b := tp.Snapshot("b", false).Records
	if len(b) != 1 || !b[0].Cut || b[0].Size != len(long) || b[0].Valid != "" {
		t.Fatalf("a frame over MaxFrameBytes: %+v, want it cut, its size the whole, unchecked", b)
	}
	c.Frame(true, time.Now(), []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"c"}}`))
	snap = tp.Snapshot("", true)
	var ids []string
	for _, s := range snap.Sessions {
		ids = append(ids, s.ID)
	}
	if fmt.Sprint(ids) != "[b c]" || snap.Limits.SessionsLetGo != 1 {
		t.Fatalf("sessions %v (%d let go), want b and c: a was written longest ago", ids, snap.Limits.SessionsLetGo)
	}
}

// An export replaces API keys, tokens and Authorization headers wherever
// they are, and keeps the counts whose names say tokens.
func TestExportRedactsSecrets(t *testing.T) {
	tp := New(Options{})
	c := tp.RPC("stdio", "x", func() string { return "s" })
	secrets := []string{"hunter2-token-value", "sk-ant-api03-abcdefghijklmnop", "AIzaSyA1234567890abcdefghijklmn", "ghp_abcdefghijklmnopqrstuvwxyz12", "eyJhbGciOiJIUzI1NiJ9.payload.sig"}
	c.Frame(true, time.Now(), []byte(`{"type":"hello","id":1,"token":"hunter2-token-value"}`))
	c.Frame(true, time.Now(), []byte(`{"type":"prompt","id":2,"message":"use ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop and AIzaSyA1234567890abcdefghijklmn"}`))
	c.Frame(false, time.Now(), []byte(`{"type":"tool_result","id":"t","output":"curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig' with ghp_abcdefghijklmnopqrstuvwxyz12","usage":{"input_tokens":12,"max_tokens":99}}`))
	c.Frame(false, time.Now(), []byte(`{"headers":[{"name":"Authorization","value":"Basic dXNlcjpwYXNz"}],"apiKey":"k1","x-api-key":"k2"}`))
	out, err := json.Marshal(tp.Export("s", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(secrets, "dXNlcjpwYXNz", `"k1"`, `"k2"`) {
		if strings.Contains(string(out), s) {
			t.Errorf("the export holds %q:\n%s", s, out)
		}
	}
	for _, keep := range []string{`"input_tokens":12`, `"max_tokens":99`, `"type":"hello"`, Redacted} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("the export lost %q:\n%s", keep, out)
		}
	}
	// Members keep their order.
	if got := string(RedactJSON([]byte(`{"z":1,"token":"abc","a":[true,null,"x"]}`))); got != `{"z":1,"token":"[redacted]","a":[true,null,"x"]}` {
		t.Errorf("redacted %s, want the members in their order", got)
	}
	// The tap itself keeps the frames as they crossed.
	if !strings.Contains(string(tp.Snapshot("s", false).Records[0].Frame), "hunter2") {
		t.Error("the snapshot was redacted; only the export should be")
	}
}

// A provider's HTTP exchange: method, the URL without its key, status,
// the time to the headers and the end, and the streamed events; the
// session is the model call's.
func TestHTTPExchange(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: a\ndata: {\"n\":1}\n\ndata: {\"n\":2}\n\n: comment data:\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	tp := New(Options{})
	client := tp.HTTPClient(srv.Client())
	ctx := context.WithValue(context.Background(), callKey{}, "s9")
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/models/x:stream?alt=sse&key=secret-key-123", strings.NewReader("{}"))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	recs := tp.Snapshot("s9", false).Records
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	u, _ := url.Parse(srv.URL)
	if r.Kind != KindHTTP || r.Method != "POST "+u.Host || r.Status != 200 || r.Events != 3 || r.Outcome != "ok" || r.Ms < r.TTFB {
		t.Errorf("exchange %+v: want POST, 200, 3 events, ok", r)
	}
	if strings.Contains(r.URL, "secret-key-123") || !strings.Contains(r.URL, "alt=sse") {
		t.Errorf("URL %q: want the key replaced and the rest kept", r.URL)
	}
}

// A reader that does not keep up loses records (counted) rather than
// holding the door up.
func TestSlowSubscriberLoses(t *testing.T) {
	tp := New(Options{})
	sub := tp.Subscribe(2)
	defer sub.Close()
	c := tp.Conn(DoorACP, "memory", "x")
	for range 5 {
		c.Frame(false, time.Now(), []byte(`{"jsonrpc":"2.0","method":"x"}`))
	}
	if n := sub.Lost(); n != 3 || len(sub.C()) != 2 {
		t.Fatalf("lost %d with %d waiting; want 3 and 2", n, len(sub.C()))
	}
}
