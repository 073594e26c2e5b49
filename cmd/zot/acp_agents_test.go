package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestACPTaskNestedUnderItsCall: over ACP a sub-agent is its task call's
// updates: a tool_call titled with the task, tool_call_updates of it whose
// content lists the sub-agent's steps and whose _meta.zot.childEvent holds
// each event, a permission request of the sub-agent asked on the task
// call, and the last update keeping the steps above the result record;
// the sub-agent's own calls are never tool calls of the session.
func TestACPTaskNestedUnderItsCall(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{taskCall("t1", "run it", "child: run a command")}},
			map[string]any{"text": "parent done"},
		}},
		childTurn("child:",
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "bash", "args": map[string]any{"command": "echo from-the-child"}}}},
			map[string]any{"text": "ran it"},
		),
	}})
	p, _, stderr := startACP(t, home, "--provider", "scripted", "--script", s)
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	var before []doorFrame
	var asked []map[string]any
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == "3" {
			if f.Error != nil {
				t.Fatalf("prompt: %s\n%s", f.raw, stderr)
			}
			break
		}
		if f.Method == "session/request_permission" {
			var q struct {
				ToolCall map[string]any `json:"toolCall"`
			}
			_ = json.Unmarshal(f.Params, &q)
			asked = append(asked, q.ToolCall)
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`, f.ID))
		}
		before = append(before, f)
	}
	if len(asked) != 1 || asked[0]["toolCallId"] != "t1" || !strings.HasPrefix(fmt.Sprint(asked[0]["title"]), "Sub-agent: bash: echo from-the-child") {
		t.Fatalf("the sub-agent's permission requests: %v", asked)
	}
	var title string
	var childEvents []string
	var last map[string]any
	for _, u := range updates(before) {
		switch u["sessionUpdate"] {
		case "tool_call":
			if u["toolCallId"] != "t1" {
				t.Errorf("a sub-agent's call became a tool call of the session: %v", u)
			}
			title = fmt.Sprint(u["title"])
		case "tool_call_update":
			if u["toolCallId"] != "t1" {
				t.Errorf("an update of another call than the task's: %v", u)
				continue
			}
			if meta, ok := u["_meta"].(map[string]any); ok {
				if ce, ok := meta["zot"].(map[string]any)["childEvent"].(map[string]any); ok {
					if ce["parentId"] != "t1" {
						t.Errorf("childEvent's parentId: %v", ce["parentId"])
					}
					ev, _ := ce["event"].(map[string]any)
					childEvents = append(childEvents, fmt.Sprint(ev["type"]))
				}
			}
			if u["status"] == "completed" || u["status"] == "failed" {
				last = u
			}
		}
	}
	if title != "task: run it" {
		t.Errorf("the task call's title: %q", title)
	}
	joined := strings.Join(childEvents, " ")
	for _, want := range []string{"user_message", "tool_call", "tool_result", "assistant_message", "turn_end"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s among the sub-agent's events: %v", want, childEvents)
		}
	}
	if strings.Contains(joined, "done") || strings.Contains(joined, "text_delta") {
		t.Errorf("a done or a delta among the sub-agent's updates: %v", childEvents)
	}
	if last == nil || last["status"] != "completed" {
		t.Fatalf("the task call did not complete: %v", last)
	}
	var text strings.Builder
	for _, c := range last["content"].([]any) {
		if inner, ok := c.(map[string]any)["content"].(map[string]any); ok {
			text.WriteString(fmt.Sprint(inner["text"]) + "\n")
		}
	}
	if got := text.String(); !strings.Contains(got, "→ bash: echo from-the-child") || !strings.Contains(got, "ran it") || !strings.Contains(got, `"stop":"end_turn"`) {
		t.Errorf("the task call's last content:\n%s", got)
	}
	if !strings.Contains(chunkText(before, "agent_message_chunk"), "parent done") {
		t.Errorf("the parent's answer did not come")
	}
}
