package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExternalEventQueuedOverACP: _zot/session/external_event sent while
// a session/prompt runs waits for it and then runs as a turn of its own:
// the prompt's answer comes first, then the event's updates (the model
// reading the event) and its answer, and two events run in the order
// sent; one cancelled with $/cancel_request while it waits is dropped
// (answered cancelled, the running prompt untouched, no model call spent
// on it), and a 17th waiting one is limit_exceeded. _zot/capabilities is answered while the turn runs.
func TestExternalEventQueuedOverACP(t *testing.T) {
	slow := map[string]any{"steps": []any{map[string]any{"text": "working on it", "chunk": 2, "delay_ms": 150}}}
	echo := map[string]any{"steps": []any{map[string]any{"echo": true}}}
	s := script(t, map[string]any{"turns": []any{slow, echo, echo, slow, echo}})
	a := startACPProc(t, doorDir(t), "--provider", "scripted", "--script", s)
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	if f, _ := p.call("3", "_zot/capabilities", `{}`, ""); f.Error != nil || !strings.Contains(string(f.Result), `"provider":"scripted"`) || !strings.Contains(string(f.Result), `"maxOutputRetries":10`) {
		t.Errorf("_zot/capabilities without a session: %s", f.raw)
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
	event := func(rid, payload string) {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"_zot/session/external_event","params":{"sessionId":%q,"payload":%s,"source":"ci"}}`, rid, id, payload))
	}
	// eventAt is the index of the frame with the user_message_chunk of
	// the event carrying text, -1 when none has it.
	eventAt := func(frames []doorFrame, text string) int {
		return slices.IndexFunc(frames, func(f doorFrame) bool {
			return strings.Contains(chunkText([]doorFrame{f}, "user_message_chunk"), text)
		})
	}

	started := prompt("4")
	event("5", `"build 12 failed"`)
	event("6", `"build 13 failed"`)
	caps, _ := p.call("7", "_zot/capabilities", fmt.Sprintf(`{"sessionId":%q}`, id), "")
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
	f, before := p.await("4", "")
	before = append(started, before...)
	if f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("prompt: %s", f.raw)
	}
	if got := chunkText(before, "agent_message_chunk"); got != "working on it" || eventAt(before, "failed") >= 0 {
		t.Errorf("before the prompt's answer: %q, event at %d; want only the prompt's turn", got, eventAt(before, "failed"))
	}
	for _, b := range before {
		if b.Method == "" && (string(b.ID) == "5" || string(b.ID) == "6") {
			t.Fatalf("an event was answered before the running prompt: %s", b.raw)
		}
	}
	for _, e := range []struct{ rid, text string }{{"5", "build 12 failed"}, {"6", "build 13 failed"}} {
		f, frames := p.await(e.rid, "")
		if f.Error != nil || string(f.Result) != `{"stopReason":"end_turn"}` {
			t.Fatalf("external_event %s: %s", e.rid, f.raw)
		}
		at := eventAt(frames, e.text)
		if at < 0 || eventAt(frames, "failed") != at {
			t.Fatalf("event %s: its user_message_chunk at %d, the first of an event at %d", e.rid, at, eventAt(frames, "failed"))
		}
		if got := chunkText(frames[at:], "user_message_chunk"); !strings.Contains(got, `source="ci"`) {
			t.Errorf("the event's user_message_chunk %q", got)
		}
		if got := chunkText(frames[at:], "agent_message_chunk"); !strings.Contains(got, "You said:") || !strings.Contains(got, e.text) {
			t.Errorf("the event's turn answered %q", got)
		}
	}

	prompt("8")
	event("9", `{"alert":"disk full"}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}`)
	f, _ = p.await("9", "")
	if f.Error != nil || string(f.Result) != `{"stopReason":"cancelled"}` {
		t.Fatalf("a waiting event cancelled: %s", f.raw)
	}
	// At most 16 events wait; each of them cancelled never runs.
	for i := range 16 {
		event(fmt.Sprint(100+i), `"queued"`)
	}
	if f, _ := p.call("200", "_zot/session/external_event", fmt.Sprintf(`{"sessionId":%q,"payload":"one too many"}`, id), ""); f.Error == nil || f.Error.Data["kind"] != "limit_exceeded" {
		t.Errorf("a 17th waiting event: %s", f.raw)
	}
	for i := range 16 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}`, 100+i))
	}
	var end doorFrame // the prompt's answer, which may come among theirs
	for cancelled := 0; cancelled < 16; {
		f := p.next()
		switch n, _ := strconv.Atoi(string(f.ID)); {
		case f.Method != "":
		case n >= 100 && n < 116:
			if string(f.Result) != `{"stopReason":"cancelled"}` {
				t.Fatalf("a waiting event cancelled: %s", f.raw)
			}
			cancelled++
		case n == 8:
			end = f
		}
	}
	if end.ID == nil {
		end, _ = p.await("8", "")
	}
	if f = end; f.Error != nil || !strings.Contains(string(f.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("the prompt running while an event was dropped: %s", f.raw)
	}
	// The dropped event took no model call: the next turn is the
	// script's fifth.
	f, frames := p.call("10", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}`, id), "")
	if f.Error != nil || chunkText(frames, "agent_message_chunk") != "You said: again" {
		t.Errorf("the prompt after the dropped event: %s / %q", f.raw, chunkText(frames, "agent_message_chunk"))
	}
}
