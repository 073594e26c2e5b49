package rpcserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/duplex"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/sdk/wire"
)

// guard bounds every wait in these tests; it only catches hangs.
const guard = 30 * time.Second

// longScript streams a long answer in small, slow deltas.
const longScript = `{"turns":[{"steps":[{"text":"` +
	"the quick brown fox jumps over the lazy dog and keeps running " +
	"the quick brown fox jumps over the lazy dog and keeps running " +
	"the quick brown fox jumps over the lazy dog and keeps running " +
	`","chunk":1,"delay_ms":2}]}]}`

// floodScript streams more deltas than the writer queues before it makes
// the agent wait for a reader.
var floodScript = `{"turns":[{"steps":[{"text":"` + strings.Repeat("abcdefghij", 400) + `","chunk":1}]}]}`

// served is a Server running in-process over an in-memory connection.
type served struct {
	t      *testing.T
	sess   *engine.Session
	srv    *Server
	client *duplex.End
	lines  *bufio.Scanner
	cancel context.CancelFunc
	result chan error
}

// serve starts a Server on a scripted session playing script.
func serve(t *testing.T, script string, opts Options) *served {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	host := engine.NewHost(engine.HostConfig{Providers: map[string]engine.ProviderSettings{"scripted": {Script: path}}})
	sess, err := host.NewSession(engine.SessionConfig{Provider: "scripted", CWD: dir})
	if err != nil {
		t.Fatal(err)
	}
	client, server := duplex.Pair()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{t: t, sess: sess, client: client, cancel: cancel, result: make(chan error, 1)}
	s.lines = bufio.NewScanner(client)
	s.lines.Buffer(nil, 1<<20)
	s.srv = New(sess, opts)
	go func() { s.result <- s.srv.Serve(ctx, server, server) }()
	t.Cleanup(func() {
		cancel()
		client.Close()
		server.Close()
		select {
		case <-s.result:
		case <-time.After(guard):
			t.Error("Serve did not return")
		}
		host.Close()
	})
	return s
}

func (s *served) send(line string) {
	s.t.Helper()
	if _, err := fmt.Fprintln(s.client, line); err != nil {
		s.t.Fatalf("send %s: %v", line, err)
	}
}

// next reads the next frame.
func (s *served) next() map[string]any {
	s.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- s.lines.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			s.t.Fatalf("output ended: %v", s.lines.Err())
		}
	case <-time.After(guard):
		s.t.Fatal("no frame")
	}
	var m map[string]any
	if err := json.Unmarshal(s.lines.Bytes(), &m); err != nil {
		s.t.Fatalf("frame %s: %v", s.lines.Bytes(), err)
	}
	return m
}

// until reads frames up to and including one of type typ.
func (s *served) until(typ string) []map[string]any {
	s.t.Helper()
	var out []map[string]any
	for {
		m := s.next()
		out = append(out, m)
		if m["type"] == typ {
			return out
		}
	}
}

func TestServeInProcess(t *testing.T) {
	s := serve(t, `{"turns":[{"steps":[{"text":"hello there"}]}]}`, Options{ValidateOutput: true})
	s.send(`{"type":"ping","id":1}`)
	if m := s.next(); m["command"] != "ping" || m["success"] != true || m["id"] != float64(1) {
		t.Fatalf("ping: %v", m)
	}
	s.send(`{"type":"prompt","id":"p","message":"hi"}`)
	if m := s.next(); m["command"] != "prompt" || m["data"].(map[string]any)["started"] != true {
		t.Fatalf("prompt answer: %v", m)
	}
	frames := s.until("done")
	var text strings.Builder
	for _, f := range frames {
		if f["prompt_id"] != "p" {
			t.Errorf("%v carries prompt_id %v", f["type"], f["prompt_id"])
		}
		if f["type"] == "text_delta" {
			text.WriteString(f["delta"].(string))
		}
	}
	if text.String() != "hello there" {
		t.Errorf("text %q", text.String())
	}
	s.send(`{"type":"get_state","id":2}`)
	if m := s.next(); m["data"].(map[string]any)["busy"] != false {
		t.Errorf("state after done: %v", m)
	}
	s.send(`{"type":"nope","id":3}`)
	if m := s.next(); m["code"] != "unknown_command" {
		t.Errorf("unknown command: %v", m)
	}
	// The end of input finishes the work and ends Serve cleanly.
	s.client.CloseWrite()
	select {
	case err := <-s.result:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		s.result <- err
	case <-time.After(guard):
		t.Fatal("Serve did not return at the end of input")
	}
}

// TestQueueAndAbortAllInProcess checks the ordering guarantees of docs/rpc.md
// in-process, where the race detector sees the door and the session.
func TestQueueAndAbortAllInProcess(t *testing.T) {
	s := serve(t, longScript, Options{})
	s.send(`{"type":"prompt","id":"a","message":"x"}`)
	s.send(`{"type":"prompt","id":"b","message":"x"}`)
	s.send(`{"type":"compact","id":"c"}`)
	s.send(`{"type":"abort","id":"stop","all":true}`)
	var order []string
	for len(order) < 4 {
		m := s.next()
		switch {
		case m["type"] == "response" && m["command"] == "abort":
			d := m["data"].(map[string]any)
			if d["aborted"] != true || d["dropped"] != float64(2) {
				t.Errorf("abort answer %v", m)
			}
			order = append(order, "answer")
		case m["type"] == "done":
			order = append(order, "done:"+m["prompt_id"].(string))
		}
	}
	if got := strings.Join(order, " "); got != "answer done:a done:b done:c" {
		t.Errorf("order %s", got)
	}
}

// TestStalledReaderBlocksNeitherAbortNorShutdown: a client that never
// reads its output still gets its work aborted, and a shutdown still
// returns, within the flush bound.
func TestStalledReaderBlocksNeitherAbortNorShutdown(t *testing.T) {
	s := serve(t, floodScript, Options{FlushTimeout: 200 * time.Millisecond})
	// Nobody reads: the writer's queue fills, and the agent waits for room.
	s.send(`{"type":"prompt","id":"a","message":"x"}`)
	deadline := time.Now().Add(guard)
	for !s.sess.Busy() {
		if time.Now().After(deadline) {
			t.Fatal("the prompt never started")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if !s.sess.Busy() {
		t.Fatal("4,000 deltas went out to a client that reads nothing: no backpressure")
	}
	s.sess.Abort(true, nil)
	for s.sess.Busy() {
		if time.Now().After(deadline) {
			t.Fatal("abort did not end the work of a client that does not read")
		}
		time.Sleep(time.Millisecond)
	}
	s.cancel()
	select {
	case err := <-s.result:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
		s.result <- err
	case <-time.After(guard):
		t.Fatal("shutdown waited for a client that does not read")
	}
}

// TestAuthInProcess: with a token, a wrong hello ends the session.
func TestAuthInProcess(t *testing.T) {
	s := serve(t, `{"turns":[{"steps":[{"text":"x"}]}]}`, Options{Token: "sesame"})
	s.send(`{"type":"hello","id":1,"token":"wrong"}`)
	if m := s.next(); m["code"] != "invalid_token" {
		t.Fatalf("wrong token: %v", m)
	}
	select {
	case err := <-s.result:
		if !errors.Is(err, ErrUnauthorized) {
			t.Errorf("Serve: %v", err)
		}
		s.result <- err
	case <-time.After(guard):
		t.Fatal("Serve went on after a wrong token")
	}
}

// TestFloodingExtensionIsBounded: an extension that pushes notices as fast
// as it can, to a client that reads nothing, does not grow the output
// queue past its limit; the drop is logged once, and the session still
// answers once the client reads.
func TestFloodingExtensionIsBounded(t *testing.T) {
	var log strings.Builder
	var logMu sync.Mutex
	s := serve(t, `{"turns":[{"steps":[{"text":"x"}]}]}`, Options{Log: lockedWriter{&logMu, &log}})
	s.send(`{"type":"ping","id":1}`)
	s.next()
	for i := range 50_000 {
		s.srv.sess.Notice(&wire.ExtNotifyEvent{Extension: "flood", Level: "info", Message: fmt.Sprint("note ", i)})
	}
	if n := s.srv.w.Backlog(); n > ExtensionBacklogLimit+16 {
		t.Errorf("backlog %d after a flood, limit %d", n, ExtensionBacklogLimit)
	}
	logMu.Lock()
	if strings.Count(log.String(), "dropping what extensions push") != 1 {
		t.Errorf("log %q", log.String())
	}
	logMu.Unlock()
	// An event the schema does not mark droppable (what a slash command
	// displays, answering the client) is not dropped by the flood.
	s.srv.sess.Notice(&wire.ExtDisplayEvent{Extension: "flood", Text: "kept"})
	s.send(`{"type":"ping","id":2}`)
	kept := false
	for {
		m := s.next()
		if m["type"] == "ext_display" && m["text"] == "kept" {
			kept = true
		}
		if m["type"] == "response" && m["id"] == float64(2) {
			break
		}
	}
	if !kept {
		t.Error("an ext_display, which the schema does not mark droppable, was dropped with the flood")
	}
}

// lockedWriter serialises writes to a builder shared with the test.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestFailuresCarryTheirCodes: a session's refusal reaches the client
// with the code its error carries (wire.CodeOf), whichever call made it.
func TestFailuresCarryTheirCodes(t *testing.T) {
	s := serve(t, longScript, Options{ValidateOutput: true})
	for _, tc := range []struct{ line, code, text string }{
		{`{"type":"set_model","id":1,"model":""}`, "unknown_model", "no model id given"},
		{`{"type":"set_model","id":2,"model":"scripted","reasoning":"xhigh"}`, "invalid_params", "xhigh"},
		{`{"type":"answer_permission","id":3,"request_id":"perm-9","decision":"allow_once"}`, "unknown_request", "perm-9"},
	} {
		s.send(tc.line)
		if m := s.next(); m["success"] != false || m["code"] != tc.code || !strings.Contains(m["error"].(string), tc.text) {
			t.Errorf("%s: got %v, want code %s naming %q", tc.line, m, tc.code, tc.text)
		}
	}
	s.send(`{"type":"prompt","id":"p","message":"hi"}`)
	if m := s.next(); m["command"] != "prompt" {
		t.Fatalf("prompt answer: %v", m)
	}
	s.send(`{"type":"clear","id":4}`)
	for {
		m := s.next()
		if m["type"] != "response" {
			continue
		}
		if m["code"] != "busy" || m["error"] != "clear: a prompt or compact is running or queued" {
			t.Errorf("clear while busy: %v", m)
		}
		break
	}
	s.until("done")
}

// TestPromptEmptyModelKeepsSession: a prompt whose model is "" runs on
// the session's model, as an absent or null one does (the schema's
// description of prompt.model says so); only set_model refuses an empty
// id.
func TestPromptEmptyModelKeepsSession(t *testing.T) {
	s := serve(t, longScript, Options{ValidateOutput: true})
	s.send(`{"type":"prompt","id":"p","message":"hi","model":""}`)
	if m := s.next(); m["command"] != "prompt" || m["success"] != true {
		t.Fatalf("prompt with an empty model: %v", m)
	}
	s.until("done")
	s.send(`{"type":"get_state","id":"s"}`)
	if m := s.next(); m["success"] != true || m["data"].(map[string]any)["model"] != "scripted" {
		t.Errorf("state after the prompt: %v", m)
	}
}
