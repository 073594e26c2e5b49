package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// userMessages returns the user_message events among evs.
func userMessages(evs []wire.Event) []*wire.UserMessageEvent {
	var out []*wire.UserMessageEvent
	for _, e := range evs {
		if u, ok := e.(*wire.UserMessageEvent); ok {
			out = append(out, u)
		}
	}
	return out
}

// lastAssistantText is the text of the last assistant_message in evs.
func lastAssistantText(evs []wire.Event) string {
	for i := len(evs) - 1; i >= 0; i-- {
		if a, ok := evs[i].(*wire.AssistantMessageEvent); ok {
			var b strings.Builder
			for _, c := range a.Content {
				if t, ok := c.(*wire.TextBlock); ok {
					b.WriteString(t.Text)
				}
			}
			return b.String()
		}
	}
	return ""
}

// TestSteerAfterToolResults: a steer sent while a tool runs is answered
// steered, lands after the tool results as a user_message of the running
// prompt (kind steer), and the model's next call answers it; the
// transcript keeps it there.
func TestSteerAfterToolResults(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "lookup", "args": map[string]any{"number": 42}}}},
			map[string]any{"text": "done without the steer"},
		}},
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"r","type":"register_tools","tools":[`+lookupTool+`]}`), "register_tools", true, "")
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	call := f.until("client_tool_call")
	resp := f.send(`{"id":"s","type":"steer","message":"use the v2 API"}`)
	if wantResponse(t, resp, "steer", true, ""); string(resp.Data) != `{"started":false,"steered":true}` {
		t.Errorf("steer answered %s", resp.Data)
	}
	id := call[len(call)-1].(*wire.ClientToolCallEvent).CallID
	wantResponse(t, f.send(`{"id":"a","type":"client_tool_result","call_id":"`+id+`","text":"#42"}`), "client_tool_result", true, "")
	evs := f.until("done")
	got := without(types(evs), "thinking_delta", "text_delta", "assistant_start", "usage")
	want := []string{"tool_result", "user_message", "turn_start", "assistant_message", "turn_end", "done"}
	if !slices.Equal(got, want) {
		t.Errorf("events after the tool: %v, want %v", got, want)
	}
	um := userMessages(evs)
	if len(um) != 1 || um[0].Kind != wire.UserMessageKindSteer || um[0].GetPromptID().String() != `"1"` {
		t.Fatalf("steer's user_message: %v", um)
	}
	if txt := lastAssistantText(evs); txt != "You said: use the v2 API" {
		t.Errorf("the model answered %q", txt)
	}
	resp = f.send(`{"id":"m","type":"get_messages"}`)
	var msgs wire.MessagesResult
	if err := json.Unmarshal(resp.Data, &msgs); err != nil {
		t.Fatalf("get_messages: %s", resp.Data)
	}
	var roles []string
	for _, m := range msgs.Messages {
		roles = append(roles, string(m.Role))
	}
	if want := []string{"user", "assistant", "tool", "user", "assistant"}; !slices.Equal(roles, want) {
		t.Errorf("transcript roles %v, want %v", roles, want)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestSteerAfterFinalAnswer: a steer sent while the model streams an
// answer with no tool call gets one more step: the model answers it
// within the same prompt.
func TestSteerAfterFinalAnswer(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "first answer", "chunk": 2, "delay_ms": 100}}},
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	f.until("assistant_start")
	resp := f.send(`{"id":"s","type":"steer","message":"shorter please"}`)
	if wantResponse(t, resp, "steer", true, ""); string(resp.Data) != `{"started":false,"steered":true}` {
		t.Errorf("steer answered %s", resp.Data)
	}
	evs := f.until("done")
	var stops []string
	for _, e := range evs {
		if te, ok := e.(*wire.TurnEndEvent); ok {
			stops = append(stops, string(te.Stop))
		}
	}
	if !slices.Equal(stops, []string{"end_turn", "end_turn"}) {
		t.Errorf("turn_end stops %v, want two end_turn", stops)
	}
	if um := userMessages(evs); len(um) != 1 || um[0].Kind != wire.UserMessageKindSteer {
		t.Errorf("user_message events %v", um)
	}
	if txt := lastAssistantText(evs); txt != "You said: shorter please" {
		t.Errorf("the model answered %q", txt)
	}
	p.exit()
}

// TestSteerIdleFollowUpAndBounds: a steer when idle is a prompt of its
// own; follow_up queues behind running work; a steer larger than 64 KiB
// is limit_exceeded and the session goes on.
func TestSteerIdleFollowUpAndBounds(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"echo": true, "delay_ms": 100}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	f := &flow{p: p}
	resp := f.send(`{"id":"s","type":"steer","message":"hello"}`)
	if wantResponse(t, resp, "steer", true, ""); string(resp.Data) != `{"started":true}` {
		t.Errorf("idle steer answered %s", resp.Data)
	}
	resp = f.send(`{"id":"f","type":"follow_up","message":"next"}`)
	if wantResponse(t, resp, "follow_up", true, ""); string(resp.Data) != `{"started":false,"queued":true,"position":1}` {
		t.Errorf("follow_up answered %s", resp.Data)
	}
	big := strings.Repeat("x", 64<<10+1)
	resp = f.send(`{"id":"b","type":"steer","message":"` + big + `"}`)
	wantResponse(t, resp, "steer", false, wire.CodeLimitExceeded)
	if evs := f.until("done"); lastAssistantText(evs) != "You said: hello" {
		t.Errorf("the steer's prompt answered %q", lastAssistantText(evs))
	}
	if evs := f.until("done"); lastAssistantText(evs) != "You said: next" {
		t.Errorf("the follow_up answered %q", lastAssistantText(evs))
	}
	wantResponse(t, f.send(`{"id":"e","type":"steer","message":""}`), "steer", false, wire.CodeInvalidParams)
	p.exit()
}

// TestInjectContextAndExternalEvent: context injected while idle reaches
// the next prompt's first model call, marked as context from its source;
// a 17th waiting context is limit_exceeded; an external event runs as a
// prompt of its own marked with its source.
func TestInjectContextAndExternalEvent(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	f := &flow{p: p}
	resp := f.send(`{"id":"c","type":"inject_context","text":"CI failed: TestParse","source":"ci"}`)
	if wantResponse(t, resp, "inject_context", true, ""); string(resp.Data) != `{"pending":1}` {
		t.Errorf("inject_context answered %s", resp.Data)
	}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"fix it"}`), "prompt", true, "")
	evs := f.until("done")
	um := userMessages(evs)
	if len(um) != 2 || um[0].Kind != "" || um[1].Kind != wire.UserMessageKindContext || um[1].Source != "ci" {
		t.Fatalf("user_message events %v", um)
	}
	if txt := lastAssistantText(evs); !strings.Contains(txt, "CI failed: TestParse") || !strings.Contains(txt, `source="ci"`) {
		t.Errorf("the model saw %q", txt)
	}
	for range 16 {
		wantResponse(t, f.send(`{"id":"c","type":"inject_context","text":"n"}`), "inject_context", true, "")
	}
	wantResponse(t, f.send(`{"id":"c","type":"inject_context","text":"n"}`), "inject_context", false, wire.CodeLimitExceeded)

	resp = f.send(`{"id":"e","type":"external_event","payload":{"alert":"build failed"},"source":"ci-pipeline"}`)
	if wantResponse(t, resp, "external_event", true, ""); string(resp.Data) != `{"started":true}` {
		t.Errorf("external_event answered %s", resp.Data)
	}
	evs = f.until("done")
	um = userMessages(evs)
	if len(um) == 0 || um[0].Kind != wire.UserMessageKindEvent || um[0].Source != "ci-pipeline" || um[0].GetPromptID().String() != `"e"` {
		t.Fatalf("external event's user_message %v", um)
	}
	wantResponse(t, f.send(`{"id":"x","type":"external_event","source":"ci"}`), "external_event", false, wire.CodeInvalidParams)
	p.exit()
}

// TestSteerOverACP: _zot/session/steer is invalid_params when no turn
// runs, and while session/prompt runs lands at the next step boundary
// (every client gets it as a user_message_chunk; the model answers it in
// the same turn); _zot/session/inject_context waits for the next model
// call; _zot/session/external_event runs a turn of its own.
func TestSteerOverACP(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "first answer", "chunk": 2, "delay_ms": 100}}},
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
	a := startACPProc(t, doorDir(t), "--provider", "scripted", "--script", s)
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")))
	if f, _ := p.call("3", "_zot/session/steer", fmt.Sprintf(`{"sessionId":%q,"message":"x"}`, id), ""); f.Error == nil || f.Error.Data["kind"] != "invalid_params" {
		t.Errorf("steer while idle: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	var frames []doorFrame
	for !slices.Contains(updateKinds(frames), "agent_message_chunk") {
		frames = append(frames, p.next())
	}
	f, before := p.call("5", "_zot/session/steer", fmt.Sprintf(`{"sessionId":%q,"message":"shorter please"}`, id), "")
	if f.Error != nil || string(f.Result) != `{"steered":true}` {
		t.Fatalf("steer: %s", f.raw)
	}
	f, rest := p.await("4", "")
	frames = append(append(frames, before...), rest...)
	if f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	if got := chunkText(frames, "user_message_chunk"); got != "shorter please" {
		t.Errorf("user_message_chunk %q", got)
	}
	if got := chunkText(frames, "agent_message_chunk"); got != "first answerYou said: shorter please" {
		t.Errorf("agent_message_chunk %q", got)
	}
	if f, _ := p.call("6", "_zot/session/inject_context", fmt.Sprintf(`{"sessionId":%q,"text":"disk almost full","source":"watcher"}`, id), ""); string(f.Result) != `{"pending":1}` {
		t.Errorf("inject_context: %s", f.raw)
	}
	f, frames = p.call("7", "_zot/session/external_event", fmt.Sprintf(`{"sessionId":%q,"payload":"build 12 failed","source":"ci"}`, id), "")
	if f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("external_event: %s", f.raw)
	}
	if got := chunkText(frames, "user_message_chunk"); !strings.Contains(got, "build 12 failed") || !strings.Contains(got, "disk almost full") {
		t.Errorf("external_event's user_message_chunk %q", got)
	}
	big := strings.Repeat("x", 64<<10+1)
	if f, _ := p.call("8", "_zot/session/inject_context", fmt.Sprintf(`{"sessionId":%q,"text":%q}`, id, big), ""); f.Error == nil || f.Error.Data["kind"] != "limit_exceeded" {
		t.Errorf("a context past 64 KiB: %.300s", f.raw)
	}
}
