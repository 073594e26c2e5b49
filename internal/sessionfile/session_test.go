package sessionfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/agent"
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

// another is one more message, to append after sample.
func another(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Time: time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC), Content: []llm.Block{&llm.TextBlock{Text: text}}}
}

// open opens path for the test and closes it when the test ends.
func open(t *testing.T, path string, opt Options) (*File, []llm.Message) {
	t.Helper()
	f, msgs, err := Open(path, opt)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
	return f, msgs
}

func mustLoad(t *testing.T, path string) []llm.Message {
	t.Helper()
	msgs, err := Load(path)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return msgs
}

func TestSaveAndLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "s.jsonl")
	f, msgs := open(t, path, Options{})
	if len(msgs) != 0 {
		t.Fatalf("open new: %d messages", len(msgs))
	}
	all := sample()
	if err := f.Save(all[:2]); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(all); err != nil { // appends the rest
		t.Fatal(err)
	}
	f.Close()
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("round trip differs:\n%#v\n%#v", got, all)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if n := len(splitLines(data)); n != 1+4 {
		t.Errorf("%d lines for a header and 4 messages (appends must not rewrite)", n)
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

func TestRewriteAndTornLinesAreIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	f.Save(all)
	f.Save(all[3:]) // compaction kept only the summary
	f.Close()
	// a crash in the middle of the next write
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"role":"user","content":[{"type":"te`)
	fh.Close()
	_, got := open(t, path, Options{})
	if !reflect.DeepEqual(got, all[3:]) {
		t.Fatalf("after the rewrite: %#v", got)
	}
}

func TestOldFilesWithResetLinesLoad(t *testing.T) {
	all := sample()
	var buf bytes.Buffer
	for _, m := range all {
		line, _ := encodeMessage(m)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.WriteString(`{"reset":true}` + "\n")
	line, _ := encodeMessage(all[3])
	buf.Write(line)
	buf.WriteByte('\n')
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, buf.Bytes(), 0o600)
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all[3:]) {
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

// TestTornLastLineIsCutAway: after a crash mid-write, the next run loads
// the file, and what it appends lands on a line of its own, so the file
// keeps loading.
func TestTornLastLineIsCutAway(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	f.Save(all[:3])
	f.Close()
	clean, _ := os.ReadFile(path)
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"role":"user","content":[{"type":"te`)
	fh.Close()

	f, got := open(t, path, Options{})
	if !reflect.DeepEqual(got, all[:3]) {
		t.Fatalf("resumed: %#v", got)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, clean) {
		t.Errorf("the torn line is still there:\n%s", data)
	}
	if err := f.Save(all); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("after the next message: %#v", got)
	}
}

// TestLastLineWithoutNewline: a complete last line whose newline never
// made it to disk is kept, and the next message starts a line of its own.
func TestLastLineWithoutNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	f.Save(all[:1])
	f.Close()
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.TrimSuffix(data, []byte("\n")), 0o600)
	f, got := open(t, path, Options{})
	if !reflect.DeepEqual(got, all[:1]) {
		t.Fatalf("resumed: %#v", got)
	}
	if err := f.Save(all); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("after the next message: %#v", got)
	}
}

// errDiskFull is the error of a write to a full disk.
var errDiskFull = errors.New("no space left on device")

// failAfter makes every write of f stop after n bytes, as a full disk does.
func failAfter(f *File, n int) {
	f.write = func(w *os.File, b []byte) (int, error) {
		if len(b) <= n {
			return w.Write(b)
		}
		m, _ := w.Write(b[:n])
		return m, errDiskFull
	}
}

// TestFailedAppendLeavesNoTornLine: a write cut short (a full disk) is
// undone, so the next Save, and every later resume, works.
func TestFailedAppendLeavesNoTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	if err := f.Save(all[:1]); err != nil {
		t.Fatal(err)
	}
	failAfter(f, 10)
	if err := f.Save(all[:3]); !errors.Is(err, errDiskFull) {
		t.Fatalf("save on a full disk: %v", err)
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all[:1]) {
		t.Fatalf("after the failed save: %#v", got)
	}
	f.write = nil // space again
	if err := f.Save(all); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("after the next save: %#v", got)
	}
}

// TestUnansweredToolCallsGetResults: a file that ends with tool calls
// whose results were never saved loads as a valid transcript, and the
// results made up for them are saved with the next message.
func TestUnansweredToolCallsGetResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	f.Save(all[:2]) // the assistant's calls, not their results
	f.Close()

	f, got := open(t, path, Options{})
	if err := agent.Validate(got); err != nil {
		t.Fatalf("resumed transcript: %v", err)
	}
	if len(got) != 3 || !reflect.DeepEqual(got[:2], all[:2]) || got[2].Role != llm.RoleTool {
		t.Fatalf("resumed: %#v", got)
	}
	for i, b := range got[2].Content {
		r, ok := b.(*llm.ToolResultBlock)
		if !ok || !r.IsError || r.CallID != all[1].ToolCalls()[i].ID || !strings.HasPrefix(r.Content[0].(*llm.TextBlock).Text, "aborted") {
			t.Errorf("result %d: %#v", i, b)
		}
	}
	next := append(got, another("go on"))
	if err := f.Save(next); err != nil {
		t.Fatal(err)
	}
	f.Close()
	loaded := mustLoad(t, path)
	if err := agent.Validate(loaded); err != nil || !reflect.DeepEqual(loaded, next) {
		t.Fatalf("after the next message (%v): %#v", err, loaded)
	}
}

// TestSecondOpenIsRefused: one writer per session file, until it closes.
func TestSecondOpenIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path, Options{})
	f.Save(sample()[:1])
	_, _, err := Open(path, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another zot") {
		t.Fatalf("second open: %v", err)
	}
	f.Close()
	if _, got := open(t, path, Options{}); len(got) != 1 {
		t.Fatalf("open after close: %d messages", len(got))
	}
}

// TestRewriteReplacesTheFile: compaction and clear replace the file with
// one that holds only the new transcript, and the lock and the appends
// carry on with it.
func TestRewriteReplacesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	f, _ := open(t, path, Options{CWD: "/x/proj"})
	all := sample()
	f.Save(all)
	before, _ := os.Stat(path)
	if err := f.Save(all[3:]); err != nil { // compaction kept only the summary
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if os.SameFile(before, after) {
		t.Error("rewritten in place, not replaced")
	}
	if after.Size() >= before.Size() || after.Mode().Perm() != 0o600 {
		t.Errorf("size %d -> %d, mode %v", before.Size(), after.Size(), after.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("package a")) || bytes.Contains(data, []byte(`"reset"`)) {
		t.Errorf("the old transcript is still on disk:\n%s", data)
	}
	if h := firstLine(t, data); h.Session == nil || h.Session.CWD != "/x/proj" {
		t.Errorf("header after the rewrite: %s", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 { // s.jsonl and s.jsonl.lock
		t.Errorf("left in the directory: %v", entries)
	}
	if _, _, err := Open(path, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("open during the session, after the rewrite: %v", err)
	}
	next := append(all[3:], another("go on"))
	if err := f.Save(next); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(nil); err != nil { // clear
		t.Fatal(err)
	}
	if got := mustLoad(t, path); len(got) != 0 {
		t.Fatalf("after clear: %#v", got)
	}
	if err := f.Save(next[:1]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mustLoad(t, path); !reflect.DeepEqual(got, next[:1]) {
		t.Fatalf("after clear and a message: %#v", got)
	}
}

// TestFailedRewriteKeepsTheOldFile: a rewrite that cannot be written
// leaves the file as it was, and the next Save writes the transcript.
func TestFailedRewriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	f, _ := open(t, path, Options{})
	all := sample()
	f.Save(all)
	failAfter(f, 10)
	if err := f.Save(all[3:]); !errors.Is(err, errDiskFull) {
		t.Fatalf("rewrite on a full disk: %v", err)
	}
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all) {
		t.Fatalf("after the failed rewrite: %#v", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left in the directory: %v", entries)
	}
	f.write = nil
	if err := f.Save(all[3:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := mustLoad(t, path); !reflect.DeepEqual(got, all[3:]) {
		t.Fatalf("after the next save: %#v", got)
	}
}

type headerLine struct {
	Session *struct {
		Version int       `json:"version"`
		CWD     string    `json:"cwd"`
		Created time.Time `json:"created"`
	} `json:"session"`
}

// firstLine decodes the first line of data as a header.
func firstLine(t *testing.T, data []byte) headerLine {
	t.Helper()
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var h headerLine
	if err := json.Unmarshal(first, &h); err != nil {
		t.Fatalf("first line %q: %v", first, err)
	}
	return h
}

// TestHeaderRecordsTheWorkingDirectory: a new file starts with a header
// naming its working directory; files without one still load, and files
// of a newer format are refused.
func TestHeaderRecordsTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	f, _ := open(t, path, Options{CWD: "/x/proj"})
	all := sample()
	f.Save(all[:1])
	f.Close()
	data, _ := os.ReadFile(path)
	h := firstLine(t, data)
	if h.Session == nil || h.Session.Version != 1 || h.Session.CWD != "/x/proj" || h.Session.Created.IsZero() {
		t.Fatalf("header: %s", data)
	}
	f, got := open(t, path, Options{CWD: "/elsewhere"})
	if !reflect.DeepEqual(got, all[:1]) {
		t.Fatalf("resumed: %#v", got)
	}
	f.Save(all[:2])
	f.Close()
	data, _ = os.ReadFile(path)
	if n := bytes.Count(data, []byte(`"session"`)); n != 1 || firstLine(t, data).Session.CWD != "/x/proj" {
		t.Errorf("%d headers after a resume:\n%s", n, data)
	}

	newer := filepath.Join(dir, "newer.jsonl")
	os.WriteFile(newer, []byte(`{"session":{"version":2}}`+"\n"), 0o600)
	if _, err := Load(newer); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("a newer format: %v", err)
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
	os.WriteFile(newer+".lock", nil, 0o600)
	os.Chtimes(old, now, now.Add(-time.Hour))
	os.Chtimes(newer, now, now)
	os.Chtimes(newer+".lock", now, now.Add(time.Hour))
	if p, _ := Newest(dir, now); p != newer {
		t.Errorf("newest = %s", p)
	}
}

// TestDirFor: one folder per working directory, readable, and never
// shared by two of them.
func TestDirFor(t *testing.T) {
	a := DirFor("/h", "/x/proj")
	if b := DirFor("/h", "/x-proj"); a == b {
		t.Errorf("/x/proj and /x-proj share %s", a)
	}
	if filepath.Dir(a) != filepath.Join("/h", "sessions") || !strings.HasPrefix(filepath.Base(a), "x-proj-") {
		t.Errorf("DirFor(/x/proj) = %s", a)
	}
	for _, same := range []string{"/x/proj/", "/x/./proj", "/x/y/../proj"} {
		if d := DirFor("/h", same); d != a {
			t.Errorf("DirFor(%s) = %s, want %s", same, d, a)
		}
	}
	if d := filepath.Base(DirFor("/h", "/")); !strings.HasPrefix(d, "root-") {
		t.Errorf("DirFor(/) = %s", d)
	}
	long := "/" + strings.Repeat("very-long-name/", 40) + "app"
	if d := filepath.Base(DirFor("/h", long)); len(d) > 80 || !strings.Contains(d, "app-") {
		t.Errorf("DirFor(long) = %s", d)
	}
}
