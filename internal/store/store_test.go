package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// write makes a session file at path holding n exchanges, the way every
// door writes one (internal/sessionfile).
func write(t *testing.T, path, cwd string, n int) {
	t.Helper()
	f, _, err := sessionfile.Open(path, sessionfile.Options{CWD: cwd})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []llm.Message
	for i := range n {
		msgs = append(msgs,
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "question  number\n" + string(rune('a'+i))}}},
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ThinkingBlock{Provider: "anthropic", Model: "claude-x", Text: "hm"}, &llm.TextBlock{Text: "answer"}}})
	}
	if err := f.Save(msgs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestListDescribesAndIndexes(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	a, b := "20260101T000000Z-00000000000000aa", "20260102T000000Z-00000000000000bb"
	write(t, s.Path(a), "/w/one", 1)
	write(t, s.Path(b), "/w/two", 2)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(s.Path(a), old, old)

	list, err := s.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != b || list[1].ID != a {
		t.Fatalf("list, newest first: %+v", list)
	}
	e := list[0]
	if e.CWD != "/w/two" || e.Messages != 4 || e.Title != "question number a" || e.Model != "claude-x" || e.Created.IsZero() || e.Path != s.Path(b) {
		t.Errorf("entry: %+v", e)
	}
	if got, _ := s.List(context.Background(), Filter{CWD: "/w/one/"}); len(got) != 1 || got[0].ID != a {
		t.Errorf("filtered by cwd: %+v", got)
	}
	var idx indexFile
	data, err := os.ReadFile(filepath.Join(dir, indexName))
	if err != nil || json.Unmarshal(data, &idx) != nil || len(idx.Sessions) != 2 {
		t.Fatalf("index: %v %s", err, data)
	}

	// A file written since is read again; a file gone is dropped.
	write(t, s.Path(a), "/w/one", 3)
	os.Remove(s.Path(b))
	list, _ = s.List(context.Background(), Filter{})
	if len(list) != 1 || list[0].ID != a || list[0].Messages != 6 {
		t.Errorf("after a write and a removal: %+v", list)
	}
}

func TestDamagedIndexIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	id := NewID()
	write(t, s.Path(id), "/w", 1)
	for _, bad := range []string{"{not json", `{"version":99,"sessions":[]}`, `{"version":1,"sessions":[{"id":"../x","size":1}]}`, ""} {
		if err := os.WriteFile(filepath.Join(dir, indexName), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		list, err := s.List(context.Background(), Filter{})
		if err != nil || len(list) != 1 || list[0].Messages != 2 {
			t.Fatalf("with index %q: %v %+v", bad, err, list)
		}
		if _, ok := s.readIndex(); !ok {
			t.Errorf("index %q not rewritten", bad)
		}
	}
	// An entry that lies about a file whose size and time it matches is
	// believed (the index is a cache), but one that does not match is not.
	idx, _ := s.readIndex()
	e := idx[id]
	e.Messages, e.Size = 99, e.Size+1
	data, _ := json.Marshal(indexFile{Version: indexVersion, Sessions: []indexEntry{e}})
	os.WriteFile(filepath.Join(dir, indexName), data, 0o600)
	if list, _ := s.List(context.Background(), Filter{}); list[0].Messages != 2 {
		t.Errorf("a stale entry was trusted: %+v", list[0])
	}
}

func TestDamagedSessionIsListedWithItsError(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	id := NewID()
	body := `{"session":{"version":1,"cwd":"/w","created":"2026-11-26T00:00:00Z"}}` + "\n" +
		`{"role":"user","content":[{"type":"te` + "\n" + `{"role":"user","content":[{"type":"text","text":"q"}]}` + "\n"
	os.WriteFile(s.Path(id), []byte(body), 0o600)
	list, err := s.List(context.Background(), Filter{})
	if err != nil || len(list) != 1 || list[0].Error == "" || list[0].CWD != "/w" {
		t.Fatalf("%v %+v", err, list)
	}
}

// oldPrint writes a session the way print mode's --continue did before:
// sessions/<folder key>/<time>.jsonl.
func oldPrint(t *testing.T, home, cwd, stamp string, n int) string {
	t.Helper()
	path := filepath.Join(sessionfile.DirFor(home, cwd), stamp+".jsonl")
	write(t, path, cwd, n)
	return path
}

func TestOldLayoutsMoveIn(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	p1 := oldPrint(t, home, "/w/proj", "20250101T000000Z", 1)
	p2 := oldPrint(t, home, "/w/proj", "20250102T000000Z", 2)
	p3 := oldPrint(t, home, "/w/other", "20250101T000000Z", 1)
	// A file of format 0 (no header) in the folder of /w/proj.
	legacy0 := filepath.Join(filepath.Dir(p1), "20240101T000000Z.jsonl")
	os.WriteFile(legacy0, []byte(`{"role":"user","content":[{"type":"text","text":"ancient"}]}`+"\n"), 0o600)
	// And a daemon session, already in the one layout.
	daemonID := "20250103T000000Z-0123456789abcdef"
	write(t, filepath.Join(dir, daemonID+".jsonl"), "/w/proj", 1)
	want := map[string][]byte{}
	for _, p := range []string{p1, p2, p3, legacy0, filepath.Join(dir, daemonID+".jsonl")} {
		want[filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p)], _ = os.ReadFile(p)
	}

	s := open(t, dir)
	for _, p := range []string{p1, p2, p3, legacy0} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s not moved", p)
		}
	}
	if left, _ := legacyDirs(dir); len(left) != 0 {
		t.Errorf("old folders left: %v", left)
	}
	list, err := s.List(context.Background(), Filter{})
	if err != nil || len(list) != 5 {
		t.Fatalf("%v %+v", err, list)
	}
	// Nothing lost: every file's bytes are one session's.
	got := map[string]bool{}
	for _, e := range list {
		data, _ := os.ReadFile(e.Path)
		for k, w := range want {
			if string(w) == string(data) {
				got[k] = true
			}
		}
	}
	if len(got) != 5 {
		t.Errorf("files found again: %v of %d", got, len(want))
	}
	proj, _ := s.List(context.Background(), Filter{CWD: "/w/proj"})
	if len(proj) != 4 {
		t.Errorf("sessions of /w/proj (three moved, one with no header, one daemon's): %+v", proj)
	}
	// A second Open finds nothing to move.
	open(t, dir)
	if again, _ := s.List(context.Background(), Filter{}); len(again) != 5 {
		t.Errorf("after a second open: %+v", again)
	}
}

func TestHeldOldFileStaysUntilFree(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	p := oldPrint(t, home, "/w", "20250101T000000Z", 1)
	f, _, err := sessionfile.Open(p, sessionfile.Options{CWD: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("a held file was moved: %v", err)
	}
	f.Close()
	open(t, dir)
	if _, err := os.Stat(p); err == nil {
		t.Fatal("a free file stayed")
	}
	if list, _ := s.List(context.Background(), Filter{CWD: "/w"}); len(list) != 1 || !strings.HasPrefix(list[0].ID, "20250101T000000Z-") {
		t.Errorf("%+v", list)
	}
}

// A run killed after linking a file under its new name but before
// removing the old one leaves it twice; the next run removes the old name
// and makes no copy.
func TestInterruptedMoveFinishes(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	p := oldPrint(t, home, "/w", "20250101T000000Z", 1)
	id := "20250101T000000Z-" + keyOfDir(filepath.Base(filepath.Dir(p)))
	if err := os.Link(p, filepath.Join(dir, id+".jsonl")); err != nil {
		t.Skip("no hard links:", err)
	}
	s := open(t, dir)
	list, _ := s.List(context.Background(), Filter{})
	if len(list) != 1 || list[0].ID != id {
		t.Errorf("%+v", list)
	}
}

func TestNewest(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	p, err := s.Newest(context.Background(), "/w")
	if err != nil || filepath.Dir(p) != dir || !ValidID(strings.TrimSuffix(filepath.Base(p), ".jsonl")) {
		t.Fatalf("new: %q %v", p, err)
	}
	write(t, p, "/w", 1)
	if again, _ := s.Newest(context.Background(), "/w"); again != p {
		t.Errorf("newest: %q, want %q", again, p)
	}
}

// An index that is not a regular file is rebuilt over, never read.
func TestIndexThatIsNoFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	write(t, s.Path(NewID()), "/w", 1)
	if err := mkfifo(filepath.Join(dir, indexName)); err != nil {
		t.Skip("no named pipes:", err)
	}
	list, err := s.List(context.Background(), Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %+v", err, list)
	}
	if _, ok := s.readIndex(); !ok {
		t.Error("the index was not replaced")
	}
}

// The entry's count and title agree with what loading the file gives,
// after a rewrite (compaction) and in a file of format 0 with reset lines.
func TestEntryAgreesWithLoad(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	id := NewID()
	f, _, err := sessionfile.Open(s.Path(id), sessionfile.Options{CWD: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	user := func(text string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: text}}}
	}
	answer := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "a"}}}
	f.Save([]llm.Message{user("one"), answer, user("two"), answer})
	summary := user("summary of one and two")
	summary.Meta = map[string]string{"compaction": "true"}
	f.Save([]llm.Message{summary, user("three"), answer}) // rewritten whole
	f.Close()
	old := "20240101T000000Z-000000000000aaaa"
	os.WriteFile(s.Path(old), []byte(`{"role":"user","content":[{"type":"text","text":"gone"}]}`+"\n"+`{"reset":true}`+"\n"+
		`{"role":"user","content":[{"type":"text","text":"kept"}]}`+"\n"+`{"role":"assistant","content":[{"type":"text","text":"a"}]}`+"\n"+`{"role":"user","cont`), 0o600)
	list, err := s.List(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		msgs, err := sessionfile.Load(e.Path)
		if err != nil || e.Messages != len(msgs) || e.Error != "" {
			t.Errorf("%s: %d messages (%s), loading gives %d (%v)", e.ID, e.Messages, e.Error, len(msgs), err)
		}
		if want := map[string]string{id: "three", old: "kept"}[e.ID]; e.Title != want {
			t.Errorf("%s: title %q, want %q", e.ID, e.Title, want)
		}
	}
}
