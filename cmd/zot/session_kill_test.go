package main

import (
	"path/filepath"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// TestRPCSessionKilledMidTurnLosesNoCommittedMessage: zot rpc --session
// writes each message as it is committed, as the daemon does, so a zot
// killed with SIGKILL mid-answer leaves the prompt of that turn in the
// file, after the whole turn before it.
func TestRPCSessionKilledMidTurnLosesNoCommittedMessage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "First answer."}}},
		map[string]any{"steps": []any{map[string]any{"text": "a slow second answer that never ends in time", "chunk": 2, "delay_ms": 50}}},
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s, "--session", file)
	p.send(`{"id":"1","type":"prompt","message":"look"}`)
	p.response()
	p.untilDone()
	p.send(`{"id":"2","type":"prompt","message":"again"}`)
	p.response()
	p.until("text_delta")
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait()

	msgs, err := sessionfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		text := ""
		for _, b := range m.Content {
			if tb, ok := b.(*llm.TextBlock); ok {
				text += tb.Text
			}
		}
		got = append(got, string(m.Role)+":"+text)
	}
	want := []string{"user:look", "assistant:First answer.", "user:again"}
	if len(got) != len(want) {
		t.Fatalf("file after SIGKILL holds %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("file after SIGKILL holds %q, want %q", got, want)
		}
	}
}
