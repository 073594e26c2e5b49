package main

import (
	"fmt"
	"strings"
	"testing"
)

// /compact through zot acp tells the client what compact_done tells a
// zot rpc client: the summary that replaced the older messages, as a
// message of the agent, with the counts of messages before and after in
// its _meta.zot.compactDone.
func TestACPCompactShowsTheSummary(t *testing.T) {
	home := doorDir(t)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "first answer"}}},
		map[string]any{"steps": []any{map[string]any{"text": "second answer"}}},
		map[string]any{"steps": []any{map[string]any{"text": "third answer"}}},
	}})
	p, _, _ := startACP(t, home, "--provider", "scripted", "--script", s, "--permission", "allow")
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home), "")
	id := sessionID(t, f)
	for i, text := range []string{"one", "two", "three"} {
		if f, _ := p.call(fmt.Sprint(3+i), "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, id, text), ""); f.Error != nil {
			t.Fatalf("prompt: %s", f.raw)
		}
	}
	f, before := p.call("6", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/compact"}]}`, id), "")
	if f.Error != nil || !strings.Contains(string(f.Result), "end_turn") {
		t.Fatalf("/compact: %s", f.raw)
	}
	var shown map[string]any
	for _, u := range updates(before) {
		if u["sessionUpdate"] == "agent_message_chunk" {
			shown = u
		}
	}
	if shown == nil {
		t.Fatalf("/compact showed no message; updates: %v", updates(before))
	}
	text, _ := shown["content"].(map[string]any)["text"].(string)
	summary, ok := strings.CutPrefix(text, "Compacted the conversation (6 messages → 5). Summary:\n\n")
	if !ok || summary == "" {
		t.Errorf("/compact showed %q", text)
	}
	meta, _ := shown["_meta"].(map[string]any)
	done, _ := meta["zot"].(map[string]any)["compactDone"].(map[string]any)
	if done["messagesBefore"] != float64(6) || done["messagesAfter"] != float64(5) {
		t.Errorf("_meta of the message: %v", shown["_meta"])
	}
}
