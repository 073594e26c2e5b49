package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

// The conformance suite runs the built binary as a subprocess on the
// scripted provider and checks what a client sees; every stdout frame is
// validated against the schema by the harness.

func TestPromptWithToolsEventOrder(t *testing.T) {
	p := start(t, nil, rpcArgs(t)...)
	p.send(`{"id":"1","type":"prompt","message":"hello"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "prompt", true, "")
	if string(resp.Data) != `{"started":true}` {
		t.Errorf("data = %s", resp.Data)
	}
	evs := p.untilDone()
	got := without(types(evs), "thinking_delta")
	want := []string{
		"user_message", "turn_start", "assistant_start", "text_delta",
		"tool_use_start", "tool_use_args", "tool_use_end", "usage", "assistant_message", "tool_call",
		"turn_end", "tool_progress", "tool_result",
		"turn_start", "assistant_start", "text_delta", "usage", "assistant_message", "turn_end", "done",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("event order:\n got %v\nwant %v", got, want)
	}
	for _, e := range evs {
		if e.GetPromptID().String() != `"1"` {
			t.Errorf("%s has prompt_id %s", e.Type(), e.GetPromptID())
		}
	}
	var stops []wire.StopReason
	for _, e := range evs {
		if te, ok := e.(*wire.TurnEndEvent); ok {
			stops = append(stops, te.Stop)
		}
		if tr, ok := e.(*wire.ToolResultEvent); ok && tr.IsError {
			t.Errorf("tool failed: %+v", tr)
		}
	}
	if !slices.Equal(stops, []wire.StopReason{wire.StopToolUse, wire.StopEndTurn}) {
		t.Errorf("stops = %v", stops)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

func TestPromptWithoutToolsEventOrder(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "Plain answer.", "usage": map[string]any{"input": 10, "output": 3}}}}}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	p.send(`{"id":7,"type":"prompt","message":"hi"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "prompt", true, "")
	if resp.ID.String() != "7" {
		t.Errorf("numeric id echoed as %s", resp.ID)
	}
	evs := p.untilDone()
	want := []string{"user_message", "turn_start", "assistant_start", "text_delta", "usage", "assistant_message", "turn_end", "done"}
	if got := without(types(evs)); !slices.Equal(got, want) {
		t.Fatalf("event order:\n got %v\nwant %v", got, want)
	}
	var text strings.Builder
	for _, e := range evs {
		if d, ok := e.(*wire.TextDeltaEvent); ok {
			text.WriteString(d.Delta)
		}
		if e.GetPromptID().String() != "7" {
			t.Errorf("%s prompt_id = %s, want 7", e.Type(), e.GetPromptID())
		}
	}
	if text.String() != "Plain answer." {
		t.Errorf("text = %q", text.String())
	}
	p.send(`{"type":"get_state"}`)
	resp, _ = p.response()
	res, err := resp.Result()
	if err != nil {
		t.Fatal(err)
	}
	st := res.(*wire.StateResult)
	if st.MessageCount != 2 || st.Busy || st.Usage.Input != 10 || st.Usage.Output != 3 || st.Provider != "scripted" {
		t.Errorf("state = %+v", st)
	}
	if !resp.ID.IsZero() {
		t.Errorf("absent id echoed as %s", resp.ID)
	}
}

func TestFailurePathsHaveStableCodes(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--max-line-bytes", "2048")...)
	cases := []struct {
		line    string
		command string
		code    wire.ErrorCode
		id      string
	}{
		{`{"id":"1","type":"prompt","message":`, "", wire.CodeMalformedJSON, ""},
		{`not json at all`, "", wire.CodeMalformedJSON, ""},
		{"{\"id\":\"2\",\"type\":\"ping\",\"x\":\"\xff\"}", "", wire.CodeInvalidUTF8, ""},
		{`{"id":"3","type":"launch"}`, "launch", wire.CodeUnknownCommand, `"3"`},
		{`{"id":4,"type":"prompt","message":42}`, "prompt", wire.CodeInvalidParams, "4"},
		{`{"id":"5","message":"no type"}`, "", wire.CodeInvalidParams, `"5"`},
		// An unknown member is ignored, not refused (TestCommandsAreReadLeniently);
		// a required one sent as null is still missing.
		{`{"id":"6","type":"prompt","message":null}`, "prompt", wire.CodeInvalidParams, `"6"`},
		{`{"id":{"nested":1},"type":"ping"}`, "ping", wire.CodeInvalidParams, ""},
		{`{"id":"8","type":"prompt","message":""}`, "prompt", wire.CodeInvalidParams, `"8"`},
		{`{"id":"9","type":"prompt","message":"x","images":[{"mime_type":"image/png","data":"%%%"}]}`, "prompt", wire.CodeInvalidImage, `"9"`},
		{`{"id":"10","type":"prompt","message":"x","images":[{"mime_type":"image/png","data":"aGVsbG8gd29ybGQ="}]}`, "prompt", wire.CodeInvalidImage, `"10"`},
		{`{"id":"11","type":"set_model","model":""}`, "set_model", wire.CodeUnknownModel, `"11"`},
		{`{"id":"13","type":"answer_permission","request_id":"perm-1","decision":"allow_once"}`, "answer_permission", wire.CodeUnknownRequest, `"13"`},
		{`{"id":"12","type":"prompt","message":"` + strings.Repeat("x", 4000) + `"}`, "", wire.CodeLineTooLong, ""},
		{`[1,2,3]`, "", wire.CodeMalformedJSON, ""},
		{`null`, "", wire.CodeMalformedJSON, ""},
		{`42`, "", wire.CodeMalformedJSON, ""},
		{`"ping"`, "", wire.CodeMalformedJSON, ""},
	}
	for _, c := range cases {
		p.send(c.line)
		resp, evs := p.response()
		if len(evs) > 0 {
			t.Errorf("%.40s: events before the response: %v", c.line, types(evs))
		}
		if resp.Success || resp.Code != c.code || resp.Command != c.command || resp.ID.String() != c.id {
			t.Errorf("%.60s:\n got command=%q code=%q id=%s error=%q\nwant command=%q code=%q id=%s", c.line, resp.Command, resp.Code, resp.ID, resp.Error, c.command, c.code, c.id)
		}
		if resp.Error == "" || strings.ContainsAny(resp.Error, "\n\r") {
			t.Errorf("%.40s: error text %q", c.line, resp.Error)
		}
		// Error texts speak of the protocol, never of Go's types.
		if strings.Contains(resp.Error, "Go value") || strings.Contains(resp.Error, "rpcserver.") || strings.Contains(resp.Error, "wire.") {
			t.Errorf("%.40s: error text names a Go type: %q", c.line, resp.Error)
		}
	}
	// After all that, the process still serves.
	p.send(`{"id":"last","type":"ping"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "ping", true, "")
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestProviderErrorThenMaxSteps(t *testing.T) {
	t.Run("provider error", func(t *testing.T) {
		s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"error": map[string]any{"status": 401, "kind": "authentication_error", "message": "invalid x-api-key"}}}}}})
		p := start(t, nil, rpcArgs(t, "--script", s)...)
		p.send(`{"id":"1","type":"prompt","message":"hi"}`)
		p.response()
		evs := p.untilDone()
		want := []string{"user_message", "turn_start", "turn_end", "error", "done"}
		if got := types(evs); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		te := evs[2].(*wire.TurnEndEvent)
		ee := evs[3].(*wire.ErrorEvent)
		if te.Stop != wire.StopError || !strings.Contains(te.Error, "invalid x-api-key") || ee.Code != wire.CodeProviderError {
			t.Errorf("turn_end %+v, error %+v", te, ee)
		}
		// The rejected prompt does not stay in the transcript.
		p.send(`{"id":"2","type":"get_messages"}`)
		resp, _ := p.response()
		if string(resp.Data) != `{"messages":[]}` {
			t.Errorf("transcript after a rejected prompt: %s", resp.Data)
		}
	})
	t.Run("max steps", func(t *testing.T) {
		s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{"path": "."}}}}}}}})
		p := start(t, nil, rpcArgs(t, "--script", s, "--max-steps", "2")...)
		p.send(`{"id":"1","type":"prompt","message":"loop"}`)
		p.response()
		evs := p.untilDone()
		last := evs[len(evs)-2]
		ee, ok := last.(*wire.ErrorEvent)
		if !ok || ee.Code != wire.CodeMaxSteps {
			t.Fatalf("want error max_steps before done, got %v", types(evs))
		}
		if n := strings.Count(strings.Join(types(evs), " "), "turn_start"); n != 2 {
			t.Errorf("%d steps ran, want 2", n)
		}
	})
}

func TestAuth(t *testing.T) {
	env := []string{"ZOTCORE_RPC_TOKEN=s3cret"}
	t.Run("missing", func(t *testing.T) {
		p := start(t, env, rpcArgs(t)...)
		p.send(`{"id":"1","type":"ping"}`)
		resp, _ := p.response()
		wantResponse(t, resp, "ping", false, wire.CodeAuthRequired)
		if code := p.wait(); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
	t.Run("wrong", func(t *testing.T) {
		p := start(t, env, rpcArgs(t)...)
		p.send(`{"id":"1","type":"hello","token":"guess"}`)
		resp, _ := p.response()
		wantResponse(t, resp, "hello", false, wire.CodeInvalidToken)
		if code := p.wait(); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
	// Exactly one response per line, also for a line the auth gate
	// refuses before it is even a command.
	for _, line := range []string{`not json`, `null`, `{"id":"1","type":"launch"}`, `{"id":"1","type":"prompt","message":5}`} {
		t.Run("bad first line "+line, func(t *testing.T) {
			p := start(t, env, rpcArgs(t)...)
			p.send(line)
			resp, _ := p.response()
			wantResponse(t, resp, resp.Command, false, wire.CodeAuthRequired)
			if code := p.wait(); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if f, ok := <-p.frames; ok {
				t.Errorf("a second frame for one line: %s", f.raw)
			}
		})
	}
	t.Run("empty token", func(t *testing.T) {
		p := start(t, []string{"ZOTCORE_RPC_TOKEN="}, rpcArgs(t)...)
		if code := p.wait(); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		if !strings.Contains(p.stderr.String(), "ZOTCORE_RPC_TOKEN is set but empty") {
			t.Errorf("stderr %q", p.stderr.String())
		}
	})
	t.Run("right", func(t *testing.T) {
		p := start(t, env, rpcArgs(t)...)
		p.send(`{"id":"1","type":"hello","token":"s3cret"}`)
		resp, _ := p.response()
		wantResponse(t, resp, "hello", true, "")
		res, _ := resp.Result()
		if h := res.(*wire.HelloResult); h.ProtocolVersion != 1 || h.Provider != "scripted" || h.Model == "" {
			t.Errorf("hello = %+v", h)
		}
		p.send(`{"id":"2","type":"ping"}`)
		resp, _ = p.response()
		wantResponse(t, resp, "ping", true, "")
		// A second hello with a wrong token is refused; the session goes on.
		p.send(`{"id":"3","type":"hello","token":"guess"}`)
		resp, _ = p.response()
		wantResponse(t, resp, "hello", false, wire.CodeInvalidToken)
		p.send(`{"id":"4","type":"ping"}`)
		resp, _ = p.response()
		wantResponse(t, resp, "ping", true, "")
		if code := p.exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

// TestStdinReadError: a read error on stdin (here: stdin is a directory)
// ends zot with a non-zero status and the error on stderr.
func TestStdinReadError(t *testing.T) {
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	cmd := exec.Command(zotBin, rpcArgs(t)...)
	cmd.Env = cleanEnv()
	cmd.Stdin = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.Contains(stderr.String(), "reading commands") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// slowScript answers every prompt with long, slow text.
func slowScript(t *testing.T, delayMS int) string {
	return script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{
		"text": strings.Repeat("slow words ", 40), "chunk": 4, "delay_ms": delayMS,
	}}}}})
}

func TestQueueingAndPosition(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 5))...)
	p.send(`{"id":"a","type":"prompt","message":"one"}`)
	p.send(`{"id":"b","type":"prompt","message":"two"}`)
	p.send(`{"id":"c","type":"compact"}`)
	p.send(`{"id":"s","type":"clear"}`)
	var answers []string
	var dones []string
	for len(dones) < 3 {
		r := p.next()
		if r.resp != nil {
			answers = append(answers, r.resp.ID.String()+" "+string(r.resp.Data)+string(r.resp.Code))
			continue
		}
		if _, ok := r.ev.(*wire.DoneEvent); ok {
			dones = append(dones, r.ev.GetPromptID().String())
		}
	}
	wantAnswers := []string{
		`"a" {"started":true}`,
		`"b" {"started":false,"queued":true,"position":1}`,
		`"c" {"started":false,"queued":true,"position":2}`,
		`"s" busy`,
	}
	if !slices.Equal(answers, wantAnswers) {
		t.Errorf("answers:\n got %q\nwant %q", answers, wantAnswers)
	}
	if !slices.Equal(dones, []string{`"a"`, `"b"`, `"c"`}) {
		t.Errorf("done order %v", dones)
	}
}

// TestIdleTheMomentDoneArrives checks that the runtime is idle for a
// client as soon as it reads done: the next prompt starts (it is not
// queued), and clear and set_model are not refused as busy.
func TestIdleTheMomentDoneArrives(t *testing.T) {
	p := start(t, nil, rpcArgs(t)...)
	for i := range 100 {
		p.send(fmt.Sprintf(`{"id":%d,"type":"prompt","message":"hi"}`, i))
		resp, _ := p.response()
		if string(resp.Data) != `{"started":true}` {
			t.Fatalf("prompt %d sent right after a done answered %s", i, resp.Data)
		}
		p.untilDone()
		switch i % 3 {
		case 0:
			p.send(`{"type":"clear"}`)
			resp, _ = p.response()
			wantResponse(t, resp, "clear", true, "")
		case 1:
			p.send(`{"type":"get_state"}`)
			resp, _ = p.response()
			if !strings.Contains(string(resp.Data), `"busy":false`) {
				t.Fatalf("get_state right after done: %s", resp.Data)
			}
		case 2:
			p.send(`{"type":"set_model","model":"scripted"}`)
			resp, _ = p.response()
			wantResponse(t, resp, "set_model", true, "")
		}
	}
}

func TestAbort(t *testing.T) {
	endsAborted := func(t *testing.T, evs []wire.Event) {
		t.Helper()
		n := len(evs)
		if n < 2 {
			t.Fatalf("events %v", types(evs))
		}
		te, ok := evs[n-2].(*wire.TurnEndEvent)
		if !ok || te.Stop != wire.StopAborted {
			t.Fatalf("abort did not end with turn_end aborted, done: %v", types(evs))
		}
		for _, e := range evs {
			if e.Type() == "error" {
				t.Errorf("an abort sent an error event: %v", types(evs))
			}
		}
	}
	t.Run("idle", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t)...)
		p.send(`{"id":"1","type":"abort"}`)
		resp, evs := p.response()
		wantResponse(t, resp, "abort", true, "")
		if string(resp.Data) != `{"aborted":false,"dropped":0}` || len(evs) != 0 {
			t.Errorf("idle abort: %s, events %v", resp.Data, types(evs))
		}
	})
	t.Run("before headers", func(t *testing.T) {
		// A real provider whose server takes the request and never
		// answers it: the abort must cancel the request itself.
		got, gone := make(chan struct{}), make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Reading the whole body lets the server notice when the
			// client closes the connection.
			_, _ = io.Copy(io.Discard, r.Body)
			close(got)
			<-r.Context().Done()
			close(gone)
		}))
		t.Cleanup(srv.Close)
		p := start(t, nil, "rpc", "--provider", "anthropic", "--api-key", "test-key",
			"--base-url", srv.URL, "--cwd", t.TempDir())
		p.send(`{"id":"1","type":"prompt","message":"hello"}`)
		resp, _ := p.response()
		wantResponse(t, resp, "prompt", true, "")
		waitFor(t, got, "the request to reach the server")
		p.send(`{"id":"2","type":"abort"}`)
		evs := abortAnswered(t, p, `{"aborted":true,"dropped":0}`)
		endsAborted(t, evs)
		for _, e := range evs {
			if isDelta(e.Type()) || e.Type() == "assistant_message" {
				t.Errorf("an abort before the answer produced %s", e.Type())
			}
		}
		waitFor(t, gone, "the aborted request to be cancelled")
		// The aborted prompt left nothing a provider would refuse.
		p.send(`{"id":"3","type":"get_messages"}`)
		resp, _ = p.response()
		res, _ := resp.Result()
		if m := res.(*wire.MessagesResult).Messages; len(m) > 1 {
			t.Errorf("transcript after an abort before headers: %+v", m)
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 20))...)
		p.send(`{"id":"1","type":"prompt","message":"talk"}`)
		p.response()
		p.until("text_delta")
		p.send(`{"id":"2","type":"abort"}`)
		evs := abortAnswered(t, p, `{"aborted":true,"dropped":0}`)
		endsAborted(t, evs)
		// The runtime serves the next prompt.
		p.send(`{"id":"3","type":"get_messages"}`)
		resp, _ := p.response()
		res, _ := resp.Result()
		for _, m := range res.(*wire.MessagesResult).Messages {
			for _, b := range m.Content {
				if b.Type() == "tool_call" {
					t.Errorf("aborted transcript keeps a tool call: %+v", m)
				}
			}
		}
	})
	t.Run("mid-tool", func(t *testing.T) {
		dir := t.TempDir()
		s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{
				map[string]any{"name": "bash", "args": map[string]any{"command": "sleep 30"}},
				map[string]any{"name": "write", "args": map[string]any{"path": "after.txt", "content": "must not exist"}},
			}},
			map[string]any{"text": "done"},
		}}}})
		p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
		p.send(`{"id":"1","type":"prompt","message":"run"}`)
		p.response()
		p.until("turn_end")
		time.Sleep(200 * time.Millisecond) // let bash start
		began := time.Now()
		p.send(`{"id":"2","type":"abort"}`)
		evs := abortAnswered(t, p, `{"aborted":true,"dropped":0}`)
		if time.Since(began) > 20*time.Second {
			t.Errorf("abort took %v: the tool was not killed", time.Since(began))
		}
		endsAborted(t, evs)
		var results []*wire.ToolResultEvent
		for _, e := range evs {
			if r, ok := e.(*wire.ToolResultEvent); ok {
				results = append(results, r)
			}
		}
		if len(results) != 2 || !results[0].IsError || !results[1].IsError {
			t.Errorf("tool results after abort: %+v", results)
		}
		if _, err := os.Stat(filepath.Join(dir, "after.txt")); err == nil {
			t.Error("a tool queued behind the aborted one still ran")
		}
	})
	t.Run("all drops the queue", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 20))...)
		p.send(`{"id":"1","type":"prompt","message":"one"}`)
		p.send(`{"id":"2","type":"prompt","message":"two"}`)
		p.response()
		p.response()
		p.send(`{"id":"3","type":"abort","all":true}`)
		first := abortAnswered(t, p, `{"aborted":true,"dropped":1}`)
		endsAborted(t, first)
		second := p.untilDone()
		endsAborted(t, second)
		if a, b := first[len(first)-1].GetPromptID().String(), second[len(second)-1].GetPromptID().String(); a != `"1"` || b != `"2"` {
			t.Errorf("dones for %s then %s, want \"1\" then \"2\"", a, b)
		}
	})
	t.Run("endings keep the order work was sent in", func(t *testing.T) {
		// A prompt and an abort sent right behind an abort all may land
		// before or after the first prompt's done; either way every
		// prompt ends, in the order sent.
		for range 10 {
			p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 20))...)
			p.send(`{"id":1,"type":"prompt","message":"one"}`)
			p.send(`{"id":2,"type":"prompt","message":"two"}`)
			p.send(`{"id":3,"type":"abort","all":true}`)
			p.send(`{"id":4,"type":"prompt","message":"three"}`)
			p.send(`{"id":5,"type":"abort","all":true}`)
			var dones []string
			answers := 0
			for len(dones) < 3 {
				r := p.next()
				if r.resp != nil {
					answers++
					continue
				}
				if r.ev.Type() == "done" {
					dones = append(dones, r.ev.GetPromptID().String())
				}
			}
			if !slices.Equal(dones, []string{"1", "2", "4"}) {
				t.Fatalf("dones in order %v", dones)
			}
			code := p.exit()
			for r := range p.frames {
				if r.resp != nil {
					answers++
				}
			}
			if code != 0 || answers != 5 {
				t.Fatalf("exit %d after %d answers", code, answers)
			}
		}
	})
}

// abortAnswered reads the answer to an abort, requiring data, then the
// events up to the next done. The answer must come before the aborted
// work's done, so a client that reads it knows the ending is on its way.
func abortAnswered(t *testing.T, p *proc, data string) []wire.Event {
	t.Helper()
	resp, evs := p.response()
	wantResponse(t, resp, "abort", true, "")
	if string(resp.Data) != data {
		t.Errorf("abort answered %s, want %s", resp.Data, data)
	}
	for _, e := range evs {
		if e.Type() == "done" {
			t.Fatalf("done came before the answer to abort: %v", types(evs))
		}
	}
	return append(evs, p.untilDone()...)
}

// waitFor waits for ch to close, failing after the hang guard.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestLargePromptAndLineLimit(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"echo": true, "chunk": 65536}}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--max-line-bytes", "2097152")...)
	big := strings.Repeat("a", 1<<20)
	p.send(`{"id":"1","type":"prompt","message":"` + big + `"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "prompt", true, "")
	var text strings.Builder
	for _, e := range p.untilDone() {
		if d, ok := e.(*wire.TextDeltaEvent); ok {
			text.WriteString(d.Delta)
		}
	}
	if text.String() != "You said: "+big {
		t.Errorf("echo of a 1 MiB prompt came back with %d bytes", text.Len())
	}
	p.send(`{"id":"2","type":"prompt","message":"` + strings.Repeat("b", 3<<20) + `"}`)
	resp, _ = p.response()
	wantResponse(t, resp, "", false, wire.CodeLineTooLong)
	p.send(`{"id":"3","type":"ping"}`)
	resp, _ = p.response()
	wantResponse(t, resp, "ping", true, "")
}

func TestImagePrompt(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	p := start(t, nil, rpcArgs(t)...)
	p.send(fmt.Sprintf(`{"id":"1","type":"prompt","message":"look","images":[{"mime_type":"image/jpeg","data":"%s"}]}`, base64.RawStdEncoding.EncodeToString(png)))
	resp, _ := p.response()
	wantResponse(t, resp, "prompt", true, "")
	evs := p.untilDone()
	um := evs[0].(*wire.UserMessageEvent)
	if len(um.Content) != 2 {
		t.Fatalf("user_message content %+v", um.Content)
	}
	img, ok := um.Content[1].(*wire.ImageBlock)
	if !ok || img.MIMEType != wire.MIMEImagePNG || img.Bytes != int64(len(png)) {
		t.Errorf("image block %+v", um.Content[1])
	}
}

func TestIDsKeepTheirType(t *testing.T) {
	p := start(t, nil, rpcArgs(t)...)
	for _, id := range []string{`"s-1"`, `12`, `1.5`, `-3`, `null`} {
		p.send(`{"id":` + id + `,"type":"ping"}`)
		resp, _ := p.response()
		want := id
		if id == "null" {
			want = ""
		}
		if resp.ID.String() != want {
			t.Errorf("id %s echoed as %q", id, resp.ID.String())
		}
	}
	p.send(`{"type":"ping"}`)
	r := p.next()
	if strings.Contains(string(r.raw), `"id"`) {
		t.Errorf("absent id echoed: %s", r.raw)
	}
}

func TestEOFWhileBusyFinishesTheWork(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 2))...)
	p.send(`{"id":"1","type":"prompt","message":"one"}`)
	p.send(`{"id":"2","type":"prompt","message":"two"}`)
	_ = p.stdin.Close()
	dones := 0
	for r := range p.frames {
		if r.ev != nil && r.ev.Type() == "done" {
			dones++
		}
	}
	if dones != 2 {
		t.Errorf("%d done events after EOF, want 2", dones)
	}
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestSIGTERMKillsToolProcesses(t *testing.T) {
	marker := fmt.Sprintf("%d", 900000+os.Getpid()%99999)
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "sleep " + marker + " & sleep " + marker + "; wait"}}}},
		map[string]any{"text": "done"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	p.send(`{"id":"1","type":"prompt","message":"run"}`)
	p.response()
	p.until("turn_end")
	deadline := time.Now().Add(10 * time.Second)
	for len(processesWith(marker)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(processesWith(marker)); n < 2 {
		t.Fatalf("the bash tool did not start its sleeps (%d found)", n)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := p.wait()
	if code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d after SIGTERM, want %d", code, 128+int(syscall.SIGTERM))
	}
	deadline = time.Now().Add(5 * time.Second)
	for len(processesWith(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("child processes left behind: %v", left)
	}
}

// processesWith lists the pids whose command line contains s.
func processesWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(data), "\x00", " ")
		if strings.HasPrefix(cmdline, "sleep ") && strings.Contains(cmdline, s) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestMissingCredential(t *testing.T) {
	p := start(t, nil, "rpc", "--provider", "anthropic", "--cwd", t.TempDir())
	code := p.wait()
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if _, ok := <-p.frames; ok {
		t.Error("something was written to stdout")
	}
	msg := p.stderr.String()
	for _, want := range []string{"ANTHROPIC_API_KEY", "--api-key", "--provider scripted"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q does not mention %s", msg, want)
		}
	}
	if strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("stderr is not one line: %q", msg)
	}
}

func TestSIGTERMAfterEOFStillAborts(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "sleep 30"}}}},
		map[string]any{"text": "done"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	p.send(`{"id":"1","type":"prompt","message":"run"}`)
	p.response()
	p.until("turn_end")
	_ = p.stdin.Close() // the work goes on after EOF…
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	evs := p.untilDone() // …until the signal aborts it
	if te, ok := evs[len(evs)-2].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
		t.Errorf("after SIGTERM: %v", types(evs))
	}
	if code := p.wait(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d", code)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("SIGTERM took %v to take effect", d)
	}
}

func TestSessionResumes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"echo": true}}}}})
	run := func(extra ...string) (int64, string) {
		args := append([]string{"rpc", "--provider", "scripted", "--cwd", dir, "--script", s}, extra...)
		p := start(t, []string{"ZOT_HOME=" + filepath.Join(dir, "home")}, args...)
		p.send(`{"id":"1","type":"prompt","message":"note ` + fmt.Sprint(len(extra)) + `"}`)
		p.response()
		p.untilDone()
		p.send(`{"id":"2","type":"get_state"}`)
		resp, _ := p.response()
		res, _ := resp.Result()
		p.send(`{"id":"3","type":"get_messages"}`)
		resp, _ = p.response()
		if code := p.exit(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return res.(*wire.StateResult).MessageCount, string(resp.Data)
	}
	if n, _ := run("--session", file); n != 2 {
		t.Fatalf("first run: %d messages", n)
	}
	n, msgs := run("--session", file)
	if n != 4 || !strings.Contains(msgs, "note 2") {
		t.Fatalf("resumed run: %d messages: %s", n, msgs)
	}
	// --continue keeps using the newest session of the working directory.
	if n, _ := run("--continue"); n != 2 {
		t.Fatalf("first --continue: %d", n)
	}
	if n, _ := run("--continue"); n != 4 {
		t.Fatalf("second --continue: %d", n)
	}
	p := start(t, nil, "rpc", "--provider", "scripted", "--session", file, "--continue")
	if code := p.wait(); code != 2 {
		t.Errorf("--session with --continue: exit %d", code)
	}
}

func TestPrintMode(t *testing.T) {
	dir := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "The answer."}}}}})
	out, err := exec.Command(zotBin, "-p", "question", "--provider", "scripted", "--cwd", dir, "--script", s).Output()
	if err != nil || string(out) != "The answer.\n" {
		t.Fatalf("plain: %q %v", out, err)
	}
	cmd := exec.Command(zotBin, "-p", "question", "--json", "--provider", "scripted", "--cwd", dir, "--script", s)
	out, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if err := schemacheck.ValidateEvent([]byte(l)); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], `{"type":"done"`) {
		t.Errorf("--json does not end with done: %s", lines[len(lines)-1])
	}
	bad := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"error": map[string]any{"status": 400, "message": "bad request"}}}}}})
	var stderr strings.Builder
	cmd = exec.Command(zotBin, "-p", "question", "--provider", "scripted", "--cwd", dir, "--script", bad)
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "bad request") {
		t.Errorf("failing prompt: %v, stderr %q", err, stderr.String())
	}
	cmd = exec.Command(zotBin, "--rpc", "--provider", "scripted", "--cwd", dir)
	cmd.Stdin = strings.NewReader(`{"id":1,"type":"ping"}` + "\n")
	out, err = cmd.Output()
	if err != nil || !strings.Contains(string(out), `"pong":true`) {
		t.Errorf("zot --rpc: %s %v", out, err)
	}
	for _, args := range [][]string{
		{"rpc", "--provider", "scripted", "--script", s, "--api-key", "k"},
		{"rpc", "--provider", "anthropic", "--api-key", "k", "--script", s},
		{"-p", "x", "--provider", "scripted", "--max-line-bytes", "5000"},
		{"--json", "--provider", "scripted"},
		{"rpc", "--provider", "scripted", "--tools", "read", "--no-tools"},
		{"rpc", "--provider", "scripted", "--tools", "read,teleport"},
	} {
		c := exec.Command(zotBin, args...)
		c.Stdin = strings.NewReader("")
		if out, err := c.Output(); err == nil || len(out) != 0 {
			t.Errorf("%v: accepted (stdout %q)", args, out)
		}
	}
}

// TestEmptyToolListMeansNoTools: --tools "" (or "," or spaces) turns every
// tool off, as Tools: []string{} does in the SDK; it never turns all on.
func TestEmptyToolListMeansNoTools(t *testing.T) {
	dir := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{}}}},
		map[string]any{"text": "ok"},
	}}}})
	for _, list := range []string{"", ",", "  ", " , "} {
		cmd := exec.Command(zotBin, "-p", "list", "--json", "--provider", "scripted", "--cwd", dir, "--script", s, "--tools", list)
		cmd.Env = cleanEnv()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("--tools %q: %v", list, err)
		}
		if !strings.Contains(string(out), `unknown tool \"ls\"; the tools are: (none)`) {
			t.Errorf("--tools %q: ls was offered:\n%s", list, out)
		}
	}
}

// TestBusyUntilLastDroppedDone: after abort all, get_state says busy until
// the done of the last dropped item is written, never before.
func TestBusyUntilLastDroppedDone(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 2))...)
	for round := range 20 {
		p.send(`{"id":"a","type":"prompt","message":"x"}`)
		p.send(`{"id":"b","type":"prompt","message":"x"}`)
		p.send(`{"id":"c","type":"prompt","message":"x"}`)
		p.send(`{"id":"stop","type":"abort","all":true}`)
		// get_state keeps coming while the three items end, so some are
		// answered between the first done and the last.
		stop := make(chan struct{})
		sent := make(chan int, 1)
		go func() {
			n := 0
			defer func() { sent <- n }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := fmt.Fprintf(p.stdin, `{"id":"s%d","type":"get_state"}`+"\n", n); err != nil {
					return
				}
				n++
				time.Sleep(20 * time.Microsecond)
			}
		}()
		dones, states, total := 0, 0, -1
		for total < 0 || states < total {
			if dones == 3 && total < 0 {
				select {
				case <-stop:
				default:
					close(stop)
				}
			}
			var f frameIn
			select {
			case total = <-sent:
				continue
			case f = <-p.frames:
			case <-time.After(hangGuard):
				t.Fatalf("round %d: stuck at %d dones, %d of %d states", round, dones, states, total)
			}
			if _, ok := f.ev.(*wire.DoneEvent); ok {
				dones++
				continue
			}
			if f.resp == nil || f.resp.Command != "get_state" {
				continue
			}
			states++
			res, err := f.resp.Result()
			if err != nil {
				t.Fatal(err)
			}
			if st := res.(*wire.StateResult); !st.Busy && dones < 3 {
				t.Fatalf("round %d: get_state said idle after %d of 3 dones", round, dones)
			}
		}
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
