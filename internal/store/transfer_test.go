package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// Remove refuses a session another holder has open, then removes the
// file, its lock and its entry.
func TestRemove(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	id := "20260101T000000Z-00000000000000aa"
	write(t, s.Path(id), "/w", 1)
	if l, _ := s.List(ctx, Filter{}); len(l) != 1 {
		t.Fatalf("list: %+v", l)
	}
	held, _, err := sessionfile.Open(s.Path(id), sessionfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, id); !errors.Is(err, sessionfile.ErrLocked) {
		t.Errorf("Remove of an open session: %v", err)
	}
	if !s.Has(id) {
		t.Fatal("an open session was removed")
	}
	held.Close()
	if err := s.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if s.Has(id) {
		t.Error("the file is still there")
	}
	if _, err := os.Stat(s.Path(id) + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file: %v", err)
	}
	var idx indexFile
	data, _ := os.ReadFile(s.Dir() + "/" + indexName)
	if json.Unmarshal(data, &idx) != nil || len(idx.Sessions) != 0 {
		t.Errorf("the index after Remove: %s", data)
	}
	if err := s.Remove(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove twice: %v", err)
	}
}

// An export holds the transcript and what the index says; its import is
// a new session with the same messages (and message ids), in the working
// directory asked for.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	id := "20260101T000000Z-00000000000000aa"
	at := time.Date(2026, 1, 1, 0, 0, 1, 500, time.UTC)
	f, _, err := sessionfile.Open(s.Path(id), sessionfile.Options{CWD: "/w/src"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Time: at, Content: []llm.Block{&llm.TextBlock{Text: "look <here> & there"}, &llm.ImageBlock{MIME: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}},
		{Role: llm.RoleAssistant, Time: at, Content: []llm.Block{&llm.ThinkingBlock{Provider: "anthropic", Model: "claude-x", Text: "hm", Signature: "sig"}, &llm.ToolCallBlock{ID: "c1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)}}},
		{Role: llm.RoleTool, Time: at, Content: []llm.Block{&llm.ToolResultBlock{CallID: "c1", Name: "read", Content: []llm.Block{&llm.TextBlock{Text: "contents"}}}}},
		{Role: llm.RoleAssistant, Time: at, Content: []llm.Block{&llm.TextBlock{Text: "done"}}},
	}
	if err := f.Save(msgs); err != nil {
		t.Fatal(err)
	}
	// Exported while open elsewhere.
	var buf bytes.Buffer
	if err := s.Export(ctx, id, &buf); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || doc["format"] != "zot-session" {
		t.Fatalf("export: %v %s", err, buf.Bytes())
	}
	if sess := doc["session"].(map[string]any); sess["id"] != id || sess["cwd"] != "/w/src" || sess["title"] != "look <here> & there" || sess["model"] != "claude-x" {
		t.Errorf("export's session: %v", sess)
	}

	im, err := s.Import(ctx, bytes.NewReader(buf.Bytes()), ImportOptions{CWD: "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if im.ID == id || im.From != id || im.CWD != "/elsewhere" || im.Messages != 4 || im.Parent != "" {
		t.Errorf("imported: %+v", im)
	}
	got, err := sessionfile.Load(im.Path)
	if err != nil || len(got) != 4 {
		t.Fatalf("imported transcript: %d %v", len(got), err)
	}
	for i := range msgs {
		if MessageID(got[i]) != MessageID(msgs[i]) {
			t.Errorf("message %d changed on the way", i)
		}
	}
	// The exported cwd, without one asked for.
	if im2, err := s.Import(ctx, bytes.NewReader(buf.Bytes()), ImportOptions{}); err != nil || im2.CWD != "/w/src" || im2.ID == im.ID {
		t.Errorf("second import: %+v %v", im2, err)
	}

	// Refused, nothing stored: another document, a newer version, a
	// transcript that does not hold together.
	before, _ := s.List(ctx, Filter{})
	broken := strings.Replace(buf.String(), `"call_id":"c1"`, `"call_id":"zz"`, 1)
	for name, in := range map[string]string{
		"not json":  "{",
		"other":     `{"format":"something","version":1}`,
		"newer":     `{"format":"zot-session","version":2,"messages":[]}`,
		"bad block": `{"format":"zot-session","version":1,"messages":[{"role":"user","content":[{"type":"video"}]}]}`,
		"no call":   broken,
	} {
		if _, err := s.Import(ctx, strings.NewReader(in), ImportOptions{}); err == nil {
			t.Errorf("%s: imported", name)
		} else if name != "no call" && name != "bad block" && !errors.Is(err, ErrNotExport) {
			t.Errorf("%s: %v, want ErrNotExport", name, err)
		}
	}
	if after, _ := s.List(ctx, Filter{}); len(after) != len(before) {
		t.Errorf("refused imports stored %d sessions", len(after)-len(before))
	}
}
