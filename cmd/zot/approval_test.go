package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// approvalScript's first prompt calls write, then bash, then bash again,
// then answers; its second calls write and bash, then answers.
func approvalScript(t *testing.T) string {
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"tool_calls": []any{map[string]any{"name": name, "args": args}}}
	}
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			call("write", map[string]any{"path": "a.txt", "content": "x"}),
			call("bash", map[string]any{"command": "echo one"}),
			call("bash", map[string]any{"command": "echo two"}),
			map[string]any{"text": "done"},
		}},
		map[string]any{"steps": []any{
			call("write", map[string]any{"path": "b.txt", "content": "y"}),
			call("bash", map[string]any{"command": "echo three"}),
			map[string]any{"text": "done again"},
		}},
	}})
}

// flow reads a zot's frames, keeping the events that came before a
// response for the next read of events: once a call is answered, its
// work goes on while the answer's response is read.
type flow struct {
	p       *proc
	pending []wire.Event
}

// until returns the events up to and including the next one of type typ.
func (f *flow) until(typ string) []wire.Event {
	f.p.t.Helper()
	if i := slices.IndexFunc(f.pending, func(e wire.Event) bool { return e.Type() == typ }); i >= 0 {
		evs := f.pending[:i+1]
		f.pending = slices.Clone(f.pending[i+1:])
		return evs
	}
	evs := append(f.pending, f.p.until(typ)...)
	f.pending = nil
	return evs
}

// send writes a command line and returns its response.
func (f *flow) send(line string) *wire.Response {
	f.p.t.Helper()
	f.p.send(line)
	resp, evs := f.p.response()
	f.pending = append(f.pending, evs...)
	return resp
}

// nextRequest reads events up to the next permission_request and checks
// that it is stamped like the events of its prompt.
func (f *flow) nextRequest(t *testing.T, promptID string) (*wire.PermissionRequestEvent, []wire.Event) {
	t.Helper()
	evs := f.until("permission_request")
	pr := evs[len(evs)-1].(*wire.PermissionRequestEvent)
	if pr.GetPromptID().String() != promptID || pr.GetSeq() == 0 {
		t.Errorf("request not stamped with its prompt: %s", pr.AppendJSON(nil))
	}
	return pr, evs
}

// answer sends an answer_permission and returns its response.
func (f *flow) answer(id, request, decision, reason string) *wire.Response {
	f.p.t.Helper()
	line := `{"id":"` + id + `","type":"answer_permission","request_id":"` + request + `","decision":"` + decision + `"`
	if reason != "" {
		line += `,"reason":"` + reason + `"`
	}
	return f.send(line + "}")
}

// TestApproveAsksBeforeWriteEditBash: with --approve, each write, edit and
// bash call waits for the client's answer to its permission_request, which
// comes after the call's turn_end and before its tool_result; allow_once
// runs it, reject refuses it with the reason, allow_always runs it and the
// tool's later calls without asking; an answer to a request that does not
// wait is unknown_request.
func TestApproveAsksBeforeWriteEditBash(t *testing.T) {
	dir := t.TempDir()
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", approvalScript(t), "--approve")
	f := &flow{p: p}
	resp := f.send(`{"id":"1","type":"prompt","message":"go"}`)
	wantResponse(t, resp, "prompt", true, "")

	pr, before := f.nextRequest(t, `"1"`)
	if pr.Tool != "write" || pr.RequestID == "" || pr.CallID == "" || !strings.Contains(string(pr.Args), `"a.txt"`) {
		t.Errorf("request %s", pr.AppendJSON(nil))
	}
	if pr.TimeoutMs == nil || *pr.TimeoutMs != (5*time.Minute).Milliseconds() {
		t.Errorf("timeout_ms of %s, want the default 5 minutes", pr.AppendJSON(nil))
	}
	got := without(types(before), "thinking_delta", "text_delta", "tool_use_start", "tool_use_args", "tool_use_end", "assistant_start", "usage")
	if want := []string{"user_message", "turn_start", "assistant_message", "tool_call", "turn_end", "permission_request"}; !slices.Equal(got, want) {
		t.Errorf("events before the request: %v, want %v", got, want)
	}
	if call := before[slices.IndexFunc(before, func(e wire.Event) bool { return e.Type() == "tool_call" })].(*wire.ToolCallEvent); call.ID != pr.CallID {
		t.Errorf("request names call %s, the tool_call is %s", pr.CallID, call.ID)
	}
	// While it waits: nothing ran, other commands are answered, and
	// unknown ids are refused.
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Error("the write ran before its answer")
	}
	resp = f.send(`{"id":"2","type":"get_state"}`)
	if !strings.Contains(string(resp.Data), `"busy":true`) {
		t.Errorf("state while waiting %s", resp.Data)
	}
	wantResponse(t, f.answer("3", "perm-404", "allow_once", ""), "answer_permission", false, wire.CodeUnknownRequest)
	resp = f.answer("4", pr.RequestID, "allow_once", "")
	wantResponse(t, resp, "answer_permission", true, "")
	if len(resp.Data) != 0 {
		t.Errorf("answer_permission data %s", resp.Data)
	}
	wantResponse(t, f.answer("5", pr.RequestID, "allow_once", ""), "answer_permission", false, wire.CodeUnknownRequest)

	// The write ran; the first bash is rejected with a reason.
	pr2, evs := f.nextRequest(t, `"1"`)
	if res := toolResults(evs); len(res) != 1 || res[0].IsError || res[0].ID != pr.CallID {
		t.Fatalf("write result %v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("the allowed write did not run: %v", err)
	}
	if pr2.Tool != "bash" || pr2.RequestID == pr.RequestID {
		t.Errorf("second request %s", pr2.AppendJSON(nil))
	}
	wantResponse(t, f.answer("6", pr2.RequestID, "reject", "not on this machine"), "answer_permission", true, "")

	// The second bash asks again (reject is once); allow_always.
	pr3, evs := f.nextRequest(t, `"1"`)
	res := toolResults(evs)
	if len(res) != 1 || !res[0].IsError || !strings.Contains(string(res[0].AppendJSON(nil)), "the user rejected the call: not on this machine") {
		t.Fatalf("rejected result %v", res)
	}
	wantResponse(t, f.answer("7", pr3.RequestID, "allow_always", ""), "answer_permission", true, "")
	evs = f.until("done")
	if res := toolResults(evs); len(res) != 1 || res[0].IsError {
		t.Fatalf("allowed bash %v", res)
	}

	// allow_always holds for bash in the next prompt; write still asks.
	f.send(`{"id":"8","type":"prompt","message":"again"}`)
	pr4, evs := f.nextRequest(t, `"8"`)
	if pr4.Tool != "write" {
		t.Errorf("the next request is %s", pr4.AppendJSON(nil))
	}
	wantResponse(t, f.answer("9", pr4.RequestID, "allow_once", ""), "answer_permission", true, "")
	evs = append(evs, f.until("done")...)
	if n := strings.Count(strings.Join(types(evs), " "), "permission_request"); n != 1 {
		t.Errorf("%d requests in the second prompt, want only the write's", n)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestApprovalTimeoutAbortAndEOF: a request with no answer is rejected
// when the approval timeout passes, when the work is aborted, and at once
// when the client closes its input (no answer can come).
func TestApprovalTimeoutAbortAndEOF(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", approvalScript(t), "--approve", "--approval-timeout", "200ms")...)
		f := &flow{p: p}
		f.send(`{"id":"1","type":"prompt","message":"go"}`)
		pr, _ := f.nextRequest(t, `"1"`)
		if pr.TimeoutMs == nil || *pr.TimeoutMs != 200 {
			t.Errorf("timeout_ms of %s", pr.AppendJSON(nil))
		}
		_, evs := f.nextRequest(t, `"1"`) // the bash's, after the write timed out
		res := toolResults(evs)
		if len(res) != 1 || !res[0].IsError || !strings.Contains(string(res[0].AppendJSON(nil)), "no answer within 200ms") {
			t.Fatalf("timed-out result %v", res)
		}
		wantResponse(t, f.answer("2", pr.RequestID, "allow_once", ""), "answer_permission", false, wire.CodeUnknownRequest)
		f.send(`{"id":"3","type":"abort"}`)
		f.until("done")
		if code := p.exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("abort", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", approvalScript(t), "--approve")...)
		f := &flow{p: p}
		f.send(`{"id":"1","type":"prompt","message":"go"}`)
		pr, _ := f.nextRequest(t, `"1"`)
		resp := f.send(`{"id":"2","type":"abort"}`)
		if string(resp.Data) != `{"aborted":true,"dropped":0}` {
			t.Errorf("abort data %s", resp.Data)
		}
		evs := f.until("done")
		if got := types(evs); !slices.Contains(got, "turn_end") || slices.Contains(got, "permission_request") {
			t.Errorf("after the abort: %v", got)
		}
		for _, r := range toolResults(evs) {
			if !r.IsError {
				t.Errorf("a call ran after the abort: %s", r.AppendJSON(nil))
			}
		}
		wantResponse(t, f.answer("3", pr.RequestID, "allow_once", ""), "answer_permission", false, wire.CodeUnknownRequest)
		if code := p.exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("end of input", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", approvalScript(t), "--approve")...)
		f := &flow{p: p}
		f.send(`{"id":"1","type":"prompt","message":"go"}`)
		f.nextRequest(t, `"1"`)
		began := time.Now()
		_ = p.stdin.Close()
		evs := f.until("done")
		res := toolResults(evs)
		if len(res) != 3 || !strings.Contains(string(res[0].AppendJSON(nil)), "the client closed its input") {
			t.Fatalf("results after the end of input %v", res)
		}
		if code := p.wait(); code != 0 {
			t.Errorf("exit %d", code)
		}
		if d := time.Since(began); d > 20*time.Second {
			t.Errorf("zot took %v to end after its input closed", d)
		}
	})
}

// TestNoApproveNoRequests: without --approve nothing is asked (the
// default, so existing clients see no change).
func TestNoApproveNoRequests(t *testing.T) {
	dir := t.TempDir()
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", approvalScript(t))
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	evs := p.untilDone()
	if slices.Contains(types(evs), "permission_request") {
		t.Errorf("asked without --approve: %v", types(evs))
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Errorf("the write did not run: %v", err)
	}
	p.exit()
	for _, args := range [][]string{{"--approval-timeout", "1m"}, {"--approve", "--approval-timeout", "-1s"}} {
		q := start(t, nil, rpcArgs(t, args...)...)
		if code := q.wait(); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}

func toolResults(evs []wire.Event) []*wire.ToolResultEvent {
	var out []*wire.ToolResultEvent
	for _, e := range evs {
		if r, ok := e.(*wire.ToolResultEvent); ok {
			out = append(out, r)
		}
	}
	return out
}
