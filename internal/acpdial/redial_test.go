package acpdial

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// agentEnd is the agent's side of one in-memory connection.
type agentEnd struct {
	t  *testing.T
	tr jsonrpc.Transport
}

type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (a agentEnd) read() frame {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg, err := a.tr.Read(ctx)
	if err != nil {
		a.t.Fatalf("the agent reads: %v", err)
	}
	var f frame
	if err := json.Unmarshal(msg, &f); err != nil {
		a.t.Fatal(err)
	}
	return f
}

func (a agentEnd) write(msg string) {
	a.t.Helper()
	var b jsonrpc.Batch
	b.Add([]byte(msg))
	if err := a.tr.Write(context.Background(), &b); err != nil {
		a.t.Fatal(err)
	}
}

// answerAsync is answer for another goroutine than the test's: it
// reports what fails without ending the test.
func (a agentEnd) answerAsync(method, result string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg, err := a.tr.Read(ctx)
	var f frame
	if err == nil {
		err = json.Unmarshal(msg, &f)
	}
	if err != nil || f.Method != method {
		a.t.Errorf("the agent got %s (%v), want %s", f.Method, err, method)
		return
	}
	var b jsonrpc.Batch
	b.Add([]byte(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":` + result + `}`))
	if err := a.tr.Write(ctx, &b); err != nil {
		a.t.Errorf("the agent writes: %v", err)
	}
}

// answer reads a request of method and answers it with result.
func (a agentEnd) answer(method, result string) frame {
	a.t.Helper()
	f := a.read()
	if f.Method != method {
		a.t.Fatalf("the agent got %s, want %s", f.Method, method)
	}
	a.write(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":` + result + `}`)
	return f
}

// TestRedial: after a drop the client's initialize is sent again and its
// session resumed; the prompt the lost connection carried is answered
// reconnected once the session is idle; an answer to a permission
// question of the lost connection is dropped, and one of the new
// connection reaches it under the id the agent gave, which the lost
// connection's question had too.
func TestRedial(t *testing.T) {
	ends := make(chan agentEnd, 2)
	dial := func(context.Context) (jsonrpc.Transport, error) {
		client, agent := jsonrpc.NewPipe()
		ends <- agentEnd{t: t, tr: agent}
		return client, nil
	}
	ctx := context.Background()
	r, err := NewRedial(ctx, dial, RedialOptions{Backoff: time.Millisecond, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan func(string), 4)
	conn := jsonrpc.NewConn(r, jsonrpc.Peer{Transport: "test"}, jsonrpc.Static(jsonrpc.HandlerFunc(
		func(ctx context.Context, _ *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
			answer := make(chan string, 1)
			asked <- func(id string) { answer <- id }
			return jsonrpc.Async(func(ctx context.Context) (any, error) {
				return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": <-answer}}, nil
			})
		})), jsonrpc.Options{})
	defer func() {
		conn.Close()
		_ = conn.Wait()
	}()

	a := <-ends
	go a.answerAsync("initialize", `{"protocolVersion":1}`)
	if _, err := conn.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "t"}}); err != nil {
		t.Fatal(err)
	}
	go a.answerAsync("session/new", `{"sessionId":"s1"}`)
	if _, err := conn.Call(ctx, "session/new", map[string]any{"cwd": "/w"}); err != nil {
		t.Fatal(err)
	}
	prompt := make(chan error, 1)
	go func() {
		_, err := conn.Call(ctx, "session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
		prompt <- err
	}()
	if f := a.read(); f.Method != "session/prompt" {
		t.Fatalf("got %s", f.Method)
	}
	a.write(`{"jsonrpc":"2.0","id":"zot-1","method":"session/request_permission","params":{}}`)
	oldAnswer := <-asked
	a.tr.Close() // the drop

	b := <-ends
	init := b.answer("initialize", `{"protocolVersion":1}`)
	if !sameJSON(init.Params, `{"protocolVersion":1,"clientInfo":{"name":"t"}}`) {
		t.Errorf("initialize again with %s", init.Params)
	}
	res := b.answer("session/resume", `{}`)
	if !sameJSON(res.Params, `{"sessionId":"s1","cwd":"/w","mcpServers":[]}`) {
		t.Errorf("resumed with %s", res.Params)
	}
	// The turn still runs, then ends.
	b.answer("_zot/status", `{"sessions":[{"sessionId":"s1","busy":true}]}`)
	b.answer("_zot/status", `{"sessions":[{"sessionId":"s1","busy":false}]}`)
	err = <-prompt
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Kind != KindReconnected {
		t.Errorf("the prompt across the drop: %v, want kind %s", err, KindReconnected)
	}

	// The new connection's question has the lost one's id.
	b.write(`{"jsonrpc":"2.0","id":"zot-1","method":"session/request_permission","params":{}}`)
	newAnswer := <-asked
	oldAnswer("from-the-lost-connection")
	newAnswer("allow_once")
	f := b.read()
	if string(f.ID) != `"zot-1"` || !sameJSON(f.Result, `{"outcome":{"optionId":"allow_once","outcome":"selected"}}`) {
		t.Errorf("the agent got %s %s %s", f.ID, f.Result, f.Method)
	}
}

// sameJSON reports whether got and want are the same JSON value.
func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
