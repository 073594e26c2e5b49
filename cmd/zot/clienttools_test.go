package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// clientToolScript's prompt calls the client tool lookup once with
// {"number":42}, then answers "done".
func clientToolScript(t *testing.T, tool string) string {
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": tool, "args": map[string]any{"number": 42}}}},
			map[string]any{"text": "done"},
		}},
	}})
}

const lookupTool = `{"name":"lookup","description":"Find a ticket.","schema":{"type":"object","properties":{"number":{"type":"integer"}}},"read_only":true}`

// TestClientToolRoundTrip: a tool registered with register_tools is
// offered to the model; its call reaches the client as client_tool_call
// (after the call's tool_call, stamped with the prompt), the client's
// client_tool_result is the tool_result the model gets, and a second
// answer to the same call is not_found.
func TestClientToolRoundTrip(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", clientToolScript(t, "lookup"))...)
	f := &flow{p: p}
	resp := f.send(`{"id":"r","type":"register_tools","tools":[` + lookupTool + `]}`)
	wantResponse(t, resp, "register_tools", true, "")
	if string(resp.Data) != `{"tools":["lookup"]}` {
		t.Errorf("register_tools answered %s", resp.Data)
	}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	evs := f.until("client_tool_call")
	call := evs[len(evs)-1].(*wire.ClientToolCallEvent)
	if call.Tool != "lookup" || string(call.Args) != `{"number":42}` || call.GetPromptID().String() != `"1"` || call.TimeoutMs != 60000 {
		t.Errorf("client_tool_call %s", call.AppendJSON(nil))
	}
	got := without(types(evs), "thinking_delta", "text_delta", "tool_use_start", "tool_use_args", "tool_use_end", "assistant_start", "usage")
	if want := []string{"user_message", "turn_start", "assistant_message", "tool_call", "turn_end", "client_tool_call"}; !slices.Equal(got, want) {
		t.Errorf("events before the call: %v, want %v", got, want)
	}
	wantResponse(t, f.send(`{"id":"a","type":"client_tool_result","call_id":"`+call.CallID+`","text":"#42: login fails"}`), "client_tool_result", true, "")
	evs = f.until("done")
	i := slices.IndexFunc(evs, func(e wire.Event) bool { return e.Type() == "tool_result" })
	if i < 0 {
		t.Fatalf("no tool_result in %v", types(evs))
	}
	if tr := evs[i].(*wire.ToolResultEvent); tr.ID != call.CallID || tr.IsError || resultText(tr) != "#42: login fails" {
		t.Errorf("tool_result %s", tr.AppendJSON(nil))
	}
	wantResponse(t, f.send(`{"id":"b","type":"client_tool_result","call_id":"`+call.CallID+`","text":"again"}`), "client_tool_result", false, wire.CodeNotFound)
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestClientToolRegistration: names share the session's namespace (a
// built-in's name is name_taken, naming who holds it), bad definitions
// are invalid_params and add nothing, and unregister_tools removes by
// name (an unknown name is not_found) or all.
func TestClientToolRegistration(t *testing.T) {
	p := start(t, nil, rpcArgs(t)...)
	p.send(`{"id":"1","type":"register_tools","tools":[` + lookupTool + `,{"name":"bash"}]}`)
	r, _ := p.response()
	wantResponse(t, r, "register_tools", false, wire.CodeNameTaken)
	if !strings.Contains(r.Error, `"bash"`) || !strings.Contains(r.Error, "built-in") {
		t.Errorf("name_taken says %q", r.Error)
	}
	for _, bad := range []string{`{"name":"has space"}`, `{"name":"` + strings.Repeat("n", 65) + `"}`, `{"name":"café"}`, `{"name":""}`, `{"name":"x","schema":[1]}`, `{"name":"x"},{"name":"x"}`, `{"description":"no name"}`} {
		p.send(`{"id":"2","type":"register_tools","tools":[` + bad + `]}`)
		r, _ = p.response()
		wantResponse(t, r, "register_tools", false, wire.CodeInvalidParams)
	}
	p.send(`{"id":"3","type":"unregister_tools"}`)
	r, _ = p.response()
	if wantResponse(t, r, "unregister_tools", true, ""); string(r.Data) != `{"tools":[]}` {
		t.Errorf("after refused registrations the client has %s", r.Data)
	}
	p.send(`{"id":"4","type":"register_tools","tools":[` + lookupTool + `,{"name":"other"}]}`)
	r, _ = p.response()
	if wantResponse(t, r, "register_tools", true, ""); string(r.Data) != `{"tools":["lookup","other"]}` {
		t.Errorf("register_tools answered %s", r.Data)
	}
	p.send(`{"id":"5","type":"unregister_tools","names":["nope"]}`)
	r, _ = p.response()
	wantResponse(t, r, "unregister_tools", false, wire.CodeNotFound)
	p.send(`{"id":"6","type":"unregister_tools","names":["other"]}`)
	r, _ = p.response()
	if wantResponse(t, r, "unregister_tools", true, ""); string(r.Data) != `{"tools":["lookup"]}` {
		t.Errorf("unregister_tools answered %s", r.Data)
	}
	p.send(`{"id":"7","type":"client_tool_result","call_id":"nothing","text":"x"}`)
	r, _ = p.response()
	wantResponse(t, r, "client_tool_result", false, wire.CodeNotFound)
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// promptClientTool registers tool, prompts, waits for the client_tool_call
// and returns the flow and the call.
func promptClientTool(t *testing.T, tool string, extra ...string) (*flow, *wire.ClientToolCallEvent) {
	t.Helper()
	p := start(t, nil, rpcArgs(t, append([]string{"--script", clientToolScript(t, "lookup")}, extra...)...)...)
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"r","type":"register_tools","tools":[`+tool+`]}`), "register_tools", true, "")
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	evs := f.until("client_tool_call")
	return f, evs[len(evs)-1].(*wire.ClientToolCallEvent)
}

// toolResult reads up to the next tool_result.
func (f *flow) toolResult(t *testing.T) *wire.ToolResultEvent {
	t.Helper()
	evs := f.until("tool_result")
	return evs[len(evs)-1].(*wire.ToolResultEvent)
}

// TestClientToolTimeoutAndAbort: a call with no answer within the tool's
// timeout_ms ends with an error result naming the timeout, and the
// answer that comes late is not_found; an abort ends a waiting call as
// aborted.
func TestClientToolTimeoutAndAbort(t *testing.T) {
	f, call := promptClientTool(t, `{"name":"lookup","timeout_ms":300,"read_only":true}`)
	if call.TimeoutMs != 300 {
		t.Errorf("timeout_ms %d, want 300", call.TimeoutMs)
	}
	tr := f.toolResult(t)
	if !tr.IsError || !strings.Contains(resultText(tr), "no result for lookup within 300ms") {
		t.Errorf("timed out call: %s", tr.AppendJSON(nil))
	}
	f.until("done")
	wantResponse(t, f.send(`{"id":"late","type":"client_tool_result","call_id":"`+call.CallID+`","text":"late"}`), "client_tool_result", false, wire.CodeNotFound)
	f.p.exit()

	f, _ = promptClientTool(t, lookupTool)
	wantResponse(t, f.send(`{"id":"x","type":"abort"}`), "abort", true, "")
	tr = f.toolResult(t)
	if !tr.IsError || resultText(tr) != "aborted" {
		t.Errorf("aborted call: %s", tr.AppendJSON(nil))
	}
	evs := f.until("done")
	if i := slices.IndexFunc(evs, func(e wire.Event) bool { return e.Type() == "turn_end" }); i < 0 || evs[i].(*wire.TurnEndEvent).Stop != wire.StopAborted {
		t.Errorf("after the abort: %v", types(evs))
	}
	f.p.exit()
}

// TestClientToolDisconnect: a client that closes its input while zot
// waits for its tool's result fails the call at once (not after the
// 60 s timeout); the work finishes and zot exits 0.
func TestClientToolDisconnect(t *testing.T) {
	f, _ := promptClientTool(t, lookupTool)
	began := time.Now()
	_ = f.p.stdin.Close()
	tr := f.toolResult(t)
	if !tr.IsError || !strings.Contains(resultText(tr), "closed its input") {
		t.Errorf("call of a gone client: %s", tr.AppendJSON(nil))
	}
	f.until("done")
	if code := f.p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("the call failed after %s", d)
	}
}

// TestClientToolApproval: a client tool not registered read_only asks
// for approval under --approve before zot calls the client, and a
// rejection never reaches it; a read_only one is not asked about.
func TestClientToolApproval(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", clientToolScript(t, "lookup"), "--approve")...)
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"r","type":"register_tools","tools":[{"name":"lookup"}]}`), "register_tools", true, "")
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, _ := f.nextRequest(t, `"1"`)
	if pr.Tool != "lookup" {
		t.Errorf("permission_request for %s", pr.Tool)
	}
	wantResponse(t, f.answer("2", pr.RequestID, "reject", "no"), "answer_permission", true, "")
	evs := f.until("done")
	if slices.ContainsFunc(evs, func(e wire.Event) bool { return e.Type() == "client_tool_call" }) {
		t.Errorf("a rejected call reached the client: %v", types(evs))
	}
	p.exit()

	f, call := promptClientTool(t, lookupTool, "--approve")
	var args map[string]int
	if err := json.Unmarshal(call.Args, &args); err != nil || args["number"] != 42 {
		t.Errorf("args %s", call.Args)
	}
	f.p.exit()
}
