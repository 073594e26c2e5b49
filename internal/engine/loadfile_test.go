package engine

import (
	"errors"
	"path/filepath"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// LoadFile swaps the session's file while idle: the transcript becomes
// the file's, later messages go to it, the file left is released; a file
// another holder has, and a busy session, are refused and change nothing.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.jsonl")
	s := newSession(t, slowScript, func(c *SessionConfig) { c.SessionFile = first })
	other := filepath.Join(dir, "other.jsonl")
	f, _, err := sessionfile.Open(other, sessionfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Save([]llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "earlier"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "yes"}}},
	})
	if err := s.LoadFile(other, "o"); !errors.Is(err, sessionfile.ErrLocked) {
		t.Errorf("LoadFile of a held file: %v", err)
	}
	f.Close()
	if s.SessionFile() != first || s.State().MessageCount != 0 {
		t.Fatalf("a refused load changed the session: %s, %d messages", s.SessionFile(), s.State().MessageCount)
	}

	c := newCollector()
	if err := s.Submit(prompt("1", "go", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadFile(other, "o"); !errors.Is(err, ErrBusy) {
		t.Errorf("LoadFile while busy: %v", err)
	}
	c.waitDone(t)
	if err := s.LoadFile(other, "o"); err != nil {
		t.Fatal(err)
	}
	if s.SessionFile() != other || s.StoredID() != "o" || s.State().MessageCount != 2 {
		t.Fatalf("after LoadFile: %s %q, %d messages", s.SessionFile(), s.StoredID(), s.State().MessageCount)
	}
	// The file left is released: another holder may open it.
	g, msgs, err := sessionfile.Open(first, sessionfile.Options{})
	if err != nil || len(msgs) < 2 {
		t.Fatalf("the file left: %d messages, %v", len(msgs), err)
	}
	g.Close()
	if err := s.Submit(prompt("2", "again", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	if got, err := sessionfile.Load(other); err != nil || len(got) < 4 || got[2].Content[0].(*llm.TextBlock).Text != "again" {
		t.Errorf("the loaded file after a prompt: %d messages, %v", len(got), err)
	}
}
