package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"zot.dev/zot/internal/checkpoint"
	"zot.dev/zot/sdk/wire"
)

// writeATxtScript's one turn writes a.txt.
const writeATxtScript = `{"turns":[{"steps":[{"tool_calls":[{"name":"write","args":{"path":"a.txt","content":"zot"}}]},{"text":"done"}]}]}`

// Undo is refused while work runs, like Clear.
func TestUndoBusy(t *testing.T) {
	s := newSession(t, slowScript, nil)
	c := newCollector()
	if err := s.Submit(prompt("p1", "hi", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Undo(0); !errors.Is(err, ErrBusy) {
		t.Errorf("undo while a prompt runs: %v, want ErrBusy", err)
	}
	c.waitDone(t)
	if _, err := s.Undo(0); err != nil {
		t.Errorf("undo once idle: %v", err)
	}
}

// A session kept in a file keeps its checkpoints beside it, so a session
// that resumes the file undoes a turn of the one before; one that
// switches to another file (LoadFile) takes that file's checkpoints.
func TestUndoFollowsTheSessionFile(t *testing.T) {
	files := t.TempDir()
	fileA, fileB := filepath.Join(files, "a.jsonl"), filepath.Join(files, "b.jsonl")
	var cwd string
	s := newSession(t, writeATxtScript, func(cfg *SessionConfig) { cfg.SessionFile = fileA; cwd = cfg.CWD })
	c := newCollector()
	if err := s.Submit(prompt("p1", "write", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	a := filepath.Join(cwd, "a.txt")
	if _, err := os.Stat(filepath.Join(checkpoint.DirFor(fileA), "log.ndjson")); err != nil {
		t.Fatalf("no checkpoints beside the session file: %v", err)
	}
	// Switched to another file, whose transcript has no turn.
	if err := s.LoadFile(fileB, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Undo(0); wire.CodeOf(err) != wire.CodeNotFound {
		t.Errorf("undo in the other file's session: %v, want not_found", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Resumed from the first file: its turn is undone.
	r := newSession(t, writeATxtScript, func(cfg *SessionConfig) { cfg.SessionFile = fileA; cfg.CWD = cwd })
	res, err := r.Undo(0)
	if err != nil || res.Turn != 1 || res.MessageCount != 0 || len(res.Files) != 1 || res.Files[0].Path != a || res.Files[0].Action != wire.UndoActionRemoved {
		t.Fatalf("undo in the resumed session: %+v %v", res, err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("a.txt is still there: %v", err)
	}
	if r.MessageCount() != 0 {
		t.Errorf("%d messages after the undo", r.MessageCount())
	}
}

// Clear forgets the checkpoints: the conversation they belong to is gone.
func TestClearForgetsCheckpoints(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	s := newSession(t, writeATxtScript, func(cfg *SessionConfig) { cfg.SessionFile = file })
	c := newCollector()
	if err := s.Submit(prompt("p1", "write", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	dir := checkpoint.DirFor(file)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no checkpoints after a write: %v", err)
	}
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the checkpoints outlived a clear: %v", err)
	}
}
