package checkpoint

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/wire"
)

// transcript is a transcript of n turns, each a user message and an
// answer, with the turns' Turn values.
func transcript(n int) ([]llm.Message, []Turn) {
	var msgs []llm.Message
	var turns []Turn
	for i := range n {
		u := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "prompt " + string(rune('a'+i))}}}
		turns = append(turns, Turn{At: len(msgs), FP: Fingerprint(u)})
		msgs = append(msgs, u, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "ok"}}})
	}
	return msgs, turns
}

// modify records a change of turn t that writes data to path (nil
// removes it), as the engine does around a tool call.
func modify(t *testing.T, s *Store, turn Turn, path string, data []byte) {
	t.Helper()
	if err := s.Before(turn, path); err != nil {
		t.Fatal(err)
	}
	if data == nil {
		os.Remove(path)
	} else if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.After(turn, path); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUndoRestoresTurnsInBothKinds: undoing the last turn puts back what
// it changed; undoing turn 1 then puts back everything, removes what the
// turns made, and cuts the transcript to nothing; the records kept in a
// folder survive a new Store.
func TestUndoRestoresTurnsInBothKinds(t *testing.T) {
	for _, kind := range []string{"memory", "folder"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			ck := ""
			if kind == "folder" {
				ck = filepath.Join(t.TempDir(), "ck")
			}
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			os.WriteFile(a, []byte("a0"), 0o600)
			msgs, turns := transcript(3)
			s := New(ck, Limits{})
			modify(t, s, turns[0], a, []byte("a1"))
			modify(t, s, turns[0], a, []byte("a1b"))
			modify(t, s, turns[1], b, []byte("b1"))
			modify(t, s, turns[2], a, []byte("a3"))
			if kind == "folder" {
				s = New(ck, Limits{}) // read back from the folder
			}
			out, err := s.Undo(msgs, 0)
			if err != nil {
				t.Fatal(err)
			}
			if out.Turn != 3 || out.Cut != 4 || len(out.Files) != 1 || out.Files[0].Action != ActionRestored || read(t, a) != "a1b" {
				t.Fatalf("undo of the last turn: %+v, a holds %q", out, read(t, a))
			}
			out, err = s.Undo(msgs[:out.Cut], 1)
			if err != nil {
				t.Fatal(err)
			}
			if out.Turn != 1 || out.Cut != 0 || len(out.Files) != 2 || read(t, a) != "a0" || read(t, b) != "<absent>" {
				t.Fatalf("undo of turn 1: %+v, a %q, b %q", out, read(t, a), read(t, b))
			}
			if st, _ := os.Stat(a); st.Mode().Perm() != 0o600 {
				t.Errorf("a's mode is %v, want 0600 as before", st.Mode().Perm())
			}
			if _, err := s.Undo(nil, 0); wire.CodeOf(err) != wire.CodeNotFound {
				t.Errorf("undo with no turns: %v", err)
			}
			if kind == "folder" {
				if blobs, _ := os.ReadDir(filepath.Join(ck, "blobs")); len(blobs) != 0 {
					t.Errorf("%d contents left after every turn was undone", len(blobs))
				}
			}
		})
	}
}

// TestUndoRefusesOutsideChanges: a file changed after zot's last change,
// or between two undone turns, refuses the undo, naming it, and nothing
// is restored.
func TestUndoRefusesOutsideChanges(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	msgs, turns := transcript(2)
	s := New("", Limits{})
	modify(t, s, turns[0], a, []byte("a1"))
	modify(t, s, turns[0], b, []byte("b1"))
	os.WriteFile(b, []byte("b by hand"), 0o644)
	_, err := s.Undo(msgs, 1)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Path != b || wire.CodeOf(err) != wire.CodeChangedOutside || !strings.Contains(err.Error(), b) {
		t.Fatalf("undo after b changed: %v", err)
	}
	if read(t, a) != "a1" || read(t, b) != "b by hand" {
		t.Fatalf("a refused undo changed files: a %q b %q", read(t, a), read(t, b))
	}
	// Changed between turns 1 and 2, then by turn 2.
	os.WriteFile(a, []byte("a by hand"), 0o644)
	modify(t, s, turns[1], a, []byte("a2"))
	os.WriteFile(b, []byte("b1"), 0o644)
	_, err = s.Undo(msgs, 1)
	if !errors.As(err, &ce) || ce.Path != a || !ce.Between {
		t.Fatalf("undo over a change between turns: %v", err)
	}
	// Turn 2 alone undoes to what the hand left.
	if _, err := s.Undo(msgs, 2); err != nil || read(t, a) != "a by hand" {
		t.Fatalf("undo of turn 2: %v, a %q", err, read(t, a))
	}
}

// TestUndoLeavesLargeFiles: a file over the file limit, and files past
// the session's limit, are recorded without their content and left as they are.
func TestUndoLeavesLargeFiles(t *testing.T) {
	dir := t.TempDir()
	big, small, late := filepath.Join(dir, "big"), filepath.Join(dir, "small"), filepath.Join(dir, "late")
	os.WriteFile(big, []byte(strings.Repeat("x", 200)), 0o644)
	os.WriteFile(small, []byte(strings.Repeat("s", 60)), 0o644)
	os.WriteFile(late, []byte(strings.Repeat("l", 60)), 0o644)
	msgs, turns := transcript(1)
	s := New(t.TempDir(), Limits{File: 100, Session: 100})
	modify(t, s, turns[0], big, []byte("b"))
	modify(t, s, turns[0], small, []byte("s"))
	modify(t, s, turns[0], late, []byte("l"))
	out, err := s.Undo(msgs, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FileOutcome{}
	for _, f := range out.Files {
		got[filepath.Base(f.Path)] = f
	}
	if f := got["big"]; f.Action != ActionNotUndoable || !strings.Contains(f.Reason, "larger than the 100 bytes") || read(t, big) != "b" {
		t.Errorf("big: %+v", f)
	}
	if f := got["small"]; f.Action != ActionRestored || read(t, small) != strings.Repeat("s", 60) {
		t.Errorf("small: %+v", f)
	}
	if f := got["late"]; f.Action != ActionNotUndoable || !strings.Contains(f.Reason, "limit of 100 bytes") {
		t.Errorf("late: %+v", f)
	}
}

// TestUndoFindsTurnsAfterCompaction: a turn whose message moved (the
// transcript was compacted) is found by its fingerprint; one whose
// message is gone names no turn any more.
func TestUndoFindsTurnsAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	msgs, turns := transcript(3)
	s := New("", Limits{})
	modify(t, s, turns[0], a, []byte("a1"))
	modify(t, s, turns[2], b, []byte("b1"))
	summary := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "summary"}}}
	compacted := append([]llm.Message{summary}, msgs[4:]...)
	out, err := s.Undo(compacted, 2)
	if err != nil || out.Cut != 1 || len(out.Files) != 1 || read(t, b) != "<absent>" || read(t, a) != "a1" {
		t.Fatalf("undo after compaction: %+v %v; a %q b %q", out, err, read(t, a), read(t, b))
	}
}

// TestGitCommandChanges: what a command changed in a git work tree is
// recorded: a committed file it edited, an untracked file it appended
// to, a file it made; a file it did not touch is not; undo puts all back.
func TestGitCommandChanges(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("git", "init", "-q")
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "same.txt"), []byte("same\n"), 0o644)
	run("git", "add", ".")
	run("git", "commit", "-q", "-m", "one")
	os.WriteFile(filepath.Join(dir, "u.txt"), []byte("dirty\n"), 0o644)
	msgs, turns := transcript(1)
	s := New("", Limits{})
	snap := s.SnapshotGit(context.Background(), dir)
	if snap == nil {
		t.Fatal("no snapshot of a git work tree")
	}
	run("sh", "-c", "sed -i s/hello/bye/ f.txt && echo more >> u.txt && echo n > new.txt")
	if err := s.AfterGit(context.Background(), turns[0], snap); err != nil {
		t.Fatal(err)
	}
	out, err := s.Undo(msgs, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Files) != 3 {
		t.Errorf("files: %+v, want f.txt, new.txt and u.txt", out.Files)
	}
	if read(t, filepath.Join(dir, "f.txt")) != "hello\n" || read(t, filepath.Join(dir, "u.txt")) != "dirty\n" || read(t, filepath.Join(dir, "new.txt")) != "<absent>" {
		t.Errorf("after undo: f %q u %q new %q", read(t, filepath.Join(dir, "f.txt")), read(t, filepath.Join(dir, "u.txt")), read(t, filepath.Join(dir, "new.txt")))
	}
	if s.SnapshotGit(context.Background(), t.TempDir()) != nil {
		t.Error("a snapshot of a folder in no work tree")
	}
}

// TestDirForStoredSession: a stored session's checkpoints are where the
// store removes them with the session.
func TestDirForStoredSession(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewID()
	if got, want := DirFor(st.Path(id)), filepath.Join(dir, ".checkpoints", id); got != want {
		t.Errorf("DirFor = %s, want %s", got, want)
	}
}

// TestUndoSkipsUnchangedFiles: a file the turns left as it was (a failed
// edit, a write of the same content) is neither restored nor listed.
func TestUndoSkipsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("same"), 0o644)
	msgs, turns := transcript(1)
	s := New("", Limits{})
	modify(t, s, turns[0], a, []byte("same"))
	modify(t, s, turns[0], b, []byte("new"))
	out, err := s.Undo(msgs, 1)
	if err != nil || len(out.Files) != 1 || out.Files[0].Path != b {
		t.Fatalf("undo: %+v %v, want only b", out, err)
	}
}

// TestGitCommandThatCommits: a command that edits a clean file and
// commits it leaves nothing for git status to show; the move of HEAD
// shows it, and undo puts the file's content back (the commit stays).
func TestGitCommandThatCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("git", "init", "-q")
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644)
	run("git", "add", ".")
	run("git", "commit", "-q", "-m", "one")
	msgs, turns := transcript(1)
	s := New("", Limits{})
	snap := s.SnapshotGit(context.Background(), dir)
	run("sh", "-c", "sed -i s/hello/bye/ f.txt && git commit -qam two")
	if err := s.AfterGit(context.Background(), turns[0], snap); err != nil {
		t.Fatal(err)
	}
	out, err := s.Undo(msgs, 1)
	if err != nil || len(out.Files) != 1 || out.Files[0].Action != ActionRestored || read(t, filepath.Join(dir, "f.txt")) != "hello\n" {
		t.Fatalf("undo: %+v %v; f.txt %q", out, err, read(t, filepath.Join(dir, "f.txt")))
	}
}
