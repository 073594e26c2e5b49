package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

func sample() []llm.Message {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	return []llm.Message{
		{Role: llm.RoleUser, Time: t0, Content: []llm.Block{&llm.TextBlock{Text: "look"}, &llm.ImageBlock{MIME: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0}}}},
		{Role: llm.RoleAssistant, Time: t0.Add(time.Second), Content: []llm.Block{
			&llm.ThinkingBlock{Provider: "anthropic", Text: "hm", Signature: "sig"},
			&llm.ThinkingBlock{Provider: "anthropic", Redacted: true, Data: "opaque"},
			&llm.ThinkingBlock{Provider: "openai-responses", Text: "own words", Raw: true, ID: "rs_1", Data: "enc"},
			&llm.ToolCallBlock{ID: "c1", Name: "read", Args: json.RawMessage(`{"path":"a.go"}`)},
			&llm.ToolCallBlock{ID: "c2", Name: "read", Args: json.RawMessage(`{}`), ArgsError: "bad json"},
		}},
		{Role: llm.RoleTool, Time: t0.Add(2 * time.Second), Content: []llm.Block{
			&llm.ToolResultBlock{CallID: "c1", Name: "read", Content: []llm.Block{&llm.TextBlock{Text: "package a"}}},
			&llm.ToolResultBlock{CallID: "c2", Name: "read", IsError: true, Content: []llm.Block{&llm.TextBlock{Text: "args"}}},
		}},
		{Role: llm.RoleUser, Time: t0.Add(3 * time.Second), Meta: map[string]string{"compaction": "true"}, Content: []llm.Block{&llm.TextBlock{Text: "summary"}}},
	}
}

func TestSaveAndLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "s.jsonl")
	f, msgs, err := Open(path)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("open new: %v %d", err, len(msgs))
	}
	all := sample()
	if err := f.Save(all[:2]); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(all); err != nil { // appends the rest
		t.Fatal(err)
	}
	f.Close()
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, all) {
		t.Fatalf("round trip differs:\n%#v\n%#v", got, all)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if n := len(splitLines(data)); n != 4 {
		t.Errorf("%d lines for 4 messages (appends must not rewrite)", n)
	}
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}

func TestRewriteWritesAResetAndTornLinesAreIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _, _ := Open(path)
	all := sample()
	f.Save(all)
	f.Save(all[3:]) // compaction kept only the summary
	f.Close()
	// a crash in the middle of the next write
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"role":"user","content":[{"type":"te`)
	fh.Close()
	f2, got, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if !reflect.DeepEqual(got, all[3:]) {
		t.Fatalf("after reset: %#v", got)
	}
}

func TestCorruptMiddleLineIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte("not json\n{\"reset\":true}\n"), 0o600)
	if _, err := Load(path); err == nil {
		t.Fatal("corrupt line accepted")
	}
}

func TestNewest(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	p, err := Newest(dir, now)
	if err != nil || filepath.Base(p) != "20261123T100000Z.jsonl" {
		t.Fatalf("empty dir: %s %v", p, err)
	}
	old := filepath.Join(dir, "a.jsonl")
	newer := filepath.Join(dir, "b.jsonl")
	os.WriteFile(old, nil, 0o600)
	os.WriteFile(newer, nil, 0o600)
	os.Chtimes(old, now, now.Add(-time.Hour))
	os.Chtimes(newer, now, now)
	if p, _ := Newest(dir, now); p != newer {
		t.Errorf("newest = %s", p)
	}
	if DirFor("/h", "/home/pat/src/app") != "/h/sessions/home-pat-src-app" {
		t.Errorf("DirFor = %s", DirFor("/h", "/home/pat/src/app"))
	}
}
