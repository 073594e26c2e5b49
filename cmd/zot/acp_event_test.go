package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestExternalEventQueuedOverACP: a _zot/session/external_event sent
// while a session/prompt runs waits for it and then runs as a turn of its
// own (answered after the prompt, its user_message_chunk after the
// prompt's answer, the model reading the event); one cancelled with
// $/cancel_request while it waits is dropped (answered cancelled, the
// running prompt untouched, no model call spent on it). _zot/capabilities
// is answered while the turn runs.
func TestExternalEventQueuedOverACP(t *testing.T) {
	slow := map[string]any{"steps": []any{map[string]any{"text": "working on it", "chunk": 2, "delay_ms": 150}}}
	s := script(t, map[string]any{"turns": []any{
		slow,
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
		slow,
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
	a := startACPProc(t, doorDir(t), "--provider", "scripted", "--script", s)
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")))
	prompt := func(rid string) []doorFrame {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"deploy it"}]}}`, rid, id))
		var frames []doorFrame
		for !slices.Contains(updateKinds(frames), "agent_message_chunk") {
			frames = append(frames, p.next())
		}
		return frames
	}

	started := prompt("4")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"_zot/session/external_event","params":{"sessionId":%q,"payload":"build 12 failed","source":"ci"}}`, id))
	caps, _ := p.call("6", "_zot/capabilities", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	var c struct {
		Provider string   `json:"provider"`
		Features []string `json:"features"`
		Limits   struct {
			MaxSteps int `json:"maxSteps"`
		} `json:"limits"`
	}
	if caps.Error != nil || json.Unmarshal(caps.Result, &c) != nil || c.Provider != "scripted" || !slices.Contains(c.Features, "external_event") || c.Limits.MaxSteps != 10000 {
		t.Errorf("_zot/capabilities while a turn runs: %s", caps.raw)
	}
	// Both answers, and every frame until them: the event's turn runs
	// once the prompt's has ended (its answer may come before or after
	// the prompt's: each is written when its own turn's updates are).
	frames := started
	answers := map[string]doorFrame{}
	for len(answers) < 2 {
		f := p.next()
		if f.Method == "" && (string(f.ID) == "4" || string(f.ID) == "5") {
			answers[string(f.ID)] = f
			continue
		}
		frames = append(frames, f)
	}
	if f := answers["4"]; f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("prompt: %s", f.raw)
	}
	if f := answers["5"]; f.Error != nil || string(f.Result) != `{"stopReason":"end_turn"}` {
		t.Fatalf("external_event: %s", f.raw)
	}
	at := slices.IndexFunc(frames, func(f doorFrame) bool {
		return strings.Contains(chunkText([]doorFrame{f}, "user_message_chunk"), "build 12 failed")
	})
	if at < 0 {
		t.Fatalf("no user_message_chunk with the event in %d frames", len(frames))
	}
	if got := chunkText(frames[:at], "agent_message_chunk"); got != "working on it" {
		t.Errorf("the running turn answered %q before the event landed (it should have finished first)", got)
	}
	if got := chunkText(frames[at:], "user_message_chunk"); !strings.Contains(got, `source="ci"`) {
		t.Errorf("the event's user_message_chunk %q", got)
	}
	if got := chunkText(frames[at:], "agent_message_chunk"); !strings.Contains(got, "You said:") || !strings.Contains(got, "build 12 failed") {
		t.Errorf("the event's turn answered %q", got)
	}

	prompt("7")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"_zot/session/external_event","params":{"sessionId":%q,"payload":{"alert":"disk full"}}}`, id))
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":8}}`)
	f, _ := p.await("8", "")
	if f.Error != nil || string(f.Result) != `{"stopReason":"cancelled"}` {
		t.Fatalf("a waiting event cancelled: %s", f.raw)
	}
	if f, _ = p.await("7", ""); f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("the prompt running while an event was dropped: %s", f.raw)
	}
	// The dropped event took no model call: the next turn is the
	// script's fourth.
	f, frames = p.call("9", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}`, id), "")
	if f.Error != nil || chunkText(frames, "agent_message_chunk") != "You said: again" {
		t.Errorf("the prompt after the dropped event: %s / %q", f.raw, chunkText(frames, "agent_message_chunk"))
	}
}
