package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestACPClientTools: over zot acp, a client registers a tool with
// _zot/session/register_tools; the model's call of it reaches the client
// as a _zot/tool/call request whose answer is the call's result; a name
// the session's built-ins hold is refused with invalid_params naming it.
func TestACPClientTools(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "lookup", "args": map[string]any{"number": 42}}}},
		map[string]any{"text": "Done."},
	}}}})
	a := startACPProc(t, home, "--provider", "scripted", "--script", s)
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)
	f, _ = p.call("3", "_zot/session/register_tools", fmt.Sprintf(`{"sessionId":%q,"tools":[{"name":"bash"}]}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 || !strings.Contains(f.raw, "built-in") {
		t.Errorf("registering bash: %s", f.raw)
	}
	f, _ = p.call("4", "_zot/session/register_tools", fmt.Sprintf(`{"sessionId":%q,"tools":[{"name":"lookup","description":"Find a ticket.","inputSchema":{"type":"object"},"readOnly":true}]}`, id), "")
	if f.Error != nil || string(f.Result) != `{"tools":["lookup"]}` {
		t.Fatalf("register_tools: %s", f.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"ticket 42?"}]}}`, id))
	var call doorFrame
	for call.Method != "_zot/tool/call" {
		call = p.next()
	}
	var req struct {
		SessionID  string         `json:"sessionId"`
		ToolCallID string         `json:"toolCallId"`
		Name       string         `json:"name"`
		Arguments  map[string]int `json:"arguments"`
		TimeoutMs  int            `json:"timeoutMs"`
	}
	if err := json.Unmarshal(call.Params, &req); err != nil || req.SessionID != id || req.ToolCallID != "c1" || req.Name != "lookup" || req.Arguments["number"] != 42 || req.TimeoutMs != 60000 {
		t.Errorf("_zot/tool/call: %s", call.raw)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"text":"#42: login fails"}}`, call.ID))
	f, before := p.await("5", "")
	if f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("prompt: %s\n%s", f.raw, a.stderr)
	}
	found := false
	for _, fr := range before {
		found = found || (fr.Method == "session/update" && strings.Contains(string(fr.Params), "#42: login fails"))
	}
	if !found {
		t.Errorf("the result is in no update: %v", updateKinds(before))
	}
	if f, _ := p.call("6", "_zot/session/unregister_tools", fmt.Sprintf(`{"sessionId":%q}`, id), ""); f.Error != nil || string(f.Result) != `{"tools":[]}` {
		t.Errorf("unregister_tools: %s", f.raw)
	}
}
