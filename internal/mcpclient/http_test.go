package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// answerTo returns the answer of a tiny server to one request.
func answerTo(m *Message) *Message {
	r := &Message{ID: m.ID}
	switch m.Method {
	case "initialize":
		r.Result, _ = json.Marshal(initResult("2025-06-18"))
	case "tools/list":
		r.Result = json.RawMessage(`{"tools":[{"name":"echo"}]}`)
	case "tools/call":
		r.Result = json.RawMessage(`{"content":[{"type":"text","text":"called"}]}`)
	default:
		r.Error = &Error{Code: CodeMethodNotFound, Message: "no"}
	}
	return r
}

func sseEvent(w io.Writer, name string, m *Message) {
	data, _ := Encode(m)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

// Basic/transports, "Streamable HTTP": every message is POSTed with
// Accept naming application/json and text/event-stream; the server may
// answer a request with JSON or an event stream; the session id the
// server gives with the answer to initialize, and the negotiated
// MCP-Protocol-Version, go with every later request; a GET opens the
// server's own stream; a DELETE ends the session.
func TestStreamableHTTP(t *testing.T) {
	var (
		mu      sync.Mutex
		seen    []string
		deleted bool
	)
	listen := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Mcp-Session-Id")+" "+r.Header.Get("Mcp-Protocol-Version")+" "+r.Header.Get("X-Test"))
		mu.Unlock()
		switch r.Method {
		case http.MethodDelete:
			mu.Lock()
			deleted = true
			mu.Unlock()
			return
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			sseEvent(w, "", &Message{Method: "notifications/tools/list_changed"})
			select {
			case <-listen:
			case <-r.Context().Done():
			}
			return
		}
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || !strings.Contains(r.Header.Get("Accept"), "application/json") {
			http.Error(w, "bad accept", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		m, err := Decode(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case m.IsNotification() || m.IsResponse():
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			data, _ := Encode(answerTo(m))
			w.Write(data)
		case r.Header.Get("Mcp-Session-Id") != "s-1":
			http.Error(w, "no session", http.StatusBadRequest)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			note, _ := json.Marshal(map[string]any{"progressToken": "t", "progress": 1})
			sseEvent(w, "message", &Message{Method: "notifications/progress", Params: note})
			sseEvent(w, "", answerTo(m))
		}
	}))
	defer srv.Close()
	defer close(listen)
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r.Header.Set("X-Test", "1")
		return http.DefaultTransport.RoundTrip(r)
	})}
	changed := make(chan struct{}, 1)
	progress := make(chan ProgressParams, 1)
	sess, err := Connect(context.Background(), DialStreamableHTTP(srv.URL, client), Options{
		OnToolsChanged: func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		OnProgress: func(p ProgressParams) {
			select {
			case progress <- p:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := sess.ListTools(context.Background())
	if err != nil || len(tools) != 1 {
		t.Fatalf("%v %v", tools, err)
	}
	res, err := sess.CallTool(context.Background(), "echo", json.RawMessage(`{}`), "t")
	if err != nil || res.Content[0].Text != "called" {
		t.Fatalf("%+v %v", res, err)
	}
	if p := <-progress; p.ProgressToken != "t" {
		t.Fatalf("progress %+v", p)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed over the GET stream")
	}
	sess.Close()
	mu.Lock()
	defer mu.Unlock()
	if !deleted {
		t.Fatal("the session was not deleted")
	}
	if seen[0] != "POST   1" {
		t.Fatalf("initialize went as %q", seen[0])
	}
	for _, s := range seen[1:] {
		if !strings.HasSuffix(s, " s-1 2025-06-18 1") {
			t.Fatalf("a later request went as %q (all: %q)", s, seen)
		}
	}
}

// A server that answers 404 to a session's request has ended the
// session: the connection ends.
func TestStreamableHTTPSessionGone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		m, _ := Decode(body)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			data, _ := Encode(answerTo(m))
			w.Write(data)
		case m.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	sess, err := Connect(context.Background(), DialStreamableHTTP(srv.URL, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.ListTools(context.Background()); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v", err)
	}
	if err := sess.Wait(); err == nil || !strings.Contains(err.Error(), "ended the session") {
		t.Fatalf("wait = %v", err)
	}
}

// Basic/transports of revision 2024-11-05, "HTTP with SSE": the first
// event of the stream, endpoint, names where messages are POSTed; the
// server's messages come as message events on the stream.
func TestLegacySSE(t *testing.T) {
	msgs := make(chan *Message, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, ": a comment\nevent: endpoint\ndata: /messages?session=9\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case m := <-msgs:
					sseEvent(w, "message", m)
				case <-r.Context().Done():
					return
				}
			}
		case r.Method == http.MethodPost && r.URL.Path == "/messages" && r.URL.Query().Get("session") == "9":
			body, _ := io.ReadAll(r.Body)
			m, err := Decode(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusAccepted)
			if !m.IsNotification() && !m.IsResponse() {
				msgs <- answerTo(m)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	conn, err := DialSSE(context.Background(), srv.URL+"/sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := Connect(context.Background(), conn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "echo", json.RawMessage(`{}`), "")
	if err != nil || res.Content[0].Text != "called" {
		t.Fatalf("%+v %v", res, err)
	}
}

// A stream that ends before its endpoint event fails the dial.
func TestLegacySSEWithoutEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {}\n\n")
	}))
	defer srv.Close()
	if _, err := DialSSE(context.Background(), srv.URL, nil); err == nil || !strings.Contains(err.Error(), "before its endpoint event") {
		t.Fatalf("err = %v", err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Event streams: data lines join with LF, comments and unknown fields
// are skipped, an event over the bound is dropped.
func TestReadEvents(t *testing.T) {
	in := ": hi\r\nevent: a\r\ndata: one\r\ndata: two\r\nid: 3\r\n\r\ndata: " + strings.Repeat("x", 100) + "\n\ndata: last"
	var got []event
	if err := readEvents(strings.NewReader(in), 50, func(e event) bool { got = append(got, e); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].name != "a" || string(got[0].data) != "one\ntwo" {
		t.Fatalf("%+v", got)
	}
}

// A streamable HTTP server that goes away (its stream ends and it can no
// longer be reached) ends the connection, as a stdio server's exit does.
func TestStreamableHTTPServerGone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		body, _ := io.ReadAll(r.Body)
		m, _ := Decode(body)
		if m.IsNotification() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		data, _ := Encode(answerTo(m))
		w.Write(data)
	}))
	sess, err := Connect(context.Background(), DialStreamableHTTP(srv.URL, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	time.Sleep(50 * time.Millisecond) // the stream is open
	srv.CloseClientConnections()
	srv.Close()
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cannot be reached") {
			t.Fatalf("wait = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
	}
}
