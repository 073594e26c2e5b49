package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"zot.dev/zot/internal/atomicfile"
	"zot.dev/zot/internal/compact"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// What undoing did to a file.
const (
	// ActionRestored: the file holds again what it held before the turn.
	ActionRestored = "restored"
	// ActionRemoved: the turn made the file; it is gone again.
	ActionRemoved = "removed"
	// ActionNotUndoable: the file's content before the turn was recorded
	// without its content (Reason says why); it was left as it is.
	ActionNotUndoable = "not_undoable"
)

// FileOutcome is what undoing did to one file.
type FileOutcome struct {
	Path   string
	Action string
	// Reason says why a file was not undoable.
	Reason string
}

// Outcome is what an undo did.
type Outcome struct {
	// Turn is the turn undone (with every turn after it), from 1.
	Turn int
	// Cut is how many messages of the transcript to keep: those before
	// the turn's user message.
	Cut int
	// Files are the files the undone turns changed, by path.
	Files []FileOutcome
}

// ConflictError refuses an undo: a file changed outside zot since zot
// recorded it, and restoring it would lose that change. Nothing was
// restored.
type ConflictError struct {
	// Path is the file.
	Path string
	// Turn is the turn whose record does not match.
	Turn int
	// Between says the change came between two undone turns, not after
	// the last.
	Between bool
	// Moved, when set, is where the file's folder resolves now, other
	// than where it did when recorded (a symbolic link put in its place).
	Moved string
}

// Error says which file changed.
func (e *ConflictError) Error() string {
	if e.Moved != "" {
		return fmt.Sprintf("cannot undo: the folder of %s leads to %s since turn %d changed it, not where zot recorded it; nothing was restored", e.Path, e.Moved, e.Turn)
	}
	if e.Between {
		return fmt.Sprintf("cannot undo: %s changed outside zot before turn %d; nothing was restored", e.Path, e.Turn)
	}
	return fmt.Sprintf("cannot undo: %s changed outside zot since turn %d changed it; nothing was restored", e.Path, e.Turn)
}

// ErrorCode returns changed_outside.
func (e *ConflictError) ErrorCode() wire.ErrorCode { return wire.CodeChangedOutside }

// errNothing is the error of an undo in a transcript without turns.
var errNothing = wire.Sentinel(wire.CodeNotFound, "nothing to undo: the conversation has no turns")

// Turns returns the indexes in msgs of the turns' user messages (a
// compaction's summary is none): turn N is at Turns(msgs)[N-1].
func Turns(msgs []llm.Message) []int {
	var out []int
	for i, m := range msgs {
		if m.Role == llm.RoleUser && !compact.IsSummary(&msgs[i]) {
			out = append(out, i)
		}
	}
	return out
}

// Undo restores the files turn (from 1; 0 for the last turn) and the
// turns after it changed in transcript msgs to what they held before it,
// and forgets their records. It fails with a *ConflictError, restoring
// nothing, when a file changed outside zot since; with an error of code
// not_found when msgs has no such turn. The caller cuts the transcript
// to Outcome.Cut messages.
func (s *Store) Undo(msgs []llm.Message, turn int) (Outcome, error) {
	turns := Turns(msgs)
	switch {
	case len(turns) == 0:
		return Outcome{}, errNothing
	case turn < 0 || turn > len(turns):
		return Outcome{}, wire.Sentinel(wire.CodeNotFound, fmt.Sprintf("no turn %d: the conversation has %d turns", turn, len(turns)))
	case turn == 0:
		turn = len(turns)
	}
	cut := turns[turn-1]
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return Outcome{}, err
	}
	// The undone groups, oldest first, and those kept.
	var undone, keep []*group
	for _, g := range s.groups {
		switch pos := position(msgs, g.turn); {
		case pos < 0:
			// Its message left the transcript (a compaction, a failed
			// prompt): its records name no turn any more.
		case pos >= cut:
			undone = append(undone, g)
		default:
			keep = append(keep, g)
		}
	}
	plan, err := s.plan(msgs, undone)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Turn: turn, Cut: cut}
	var failed error
	for _, p := range plan {
		fo := FileOutcome{Path: p.path}
		switch {
		case !p.to.Exists:
			fo.Action = ActionRemoved
			if err := os.Remove(p.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				failed = errors.Join(failed, fmt.Errorf("removing %s: %w", p.path, err))
				continue
			}
		case !p.to.Kept:
			fo.Action, fo.Reason = ActionNotUndoable, p.to.Why
		default:
			fo.Action = ActionRestored
			if err := s.restore(p.path, p.to); err != nil {
				failed = errors.Join(failed, err)
				continue
			}
		}
		out.Files = append(out.Files, fo)
	}
	if failed != nil {
		return Outcome{}, failed
	}
	if err := s.rewrite(keep); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

// position returns the index in msgs of turn t's user message, -1 when it
// is not there: at t.At, else (the transcript was compacted) the last
// user message of its fingerprint before it.
func position(msgs []llm.Message, t Turn) int {
	if t.At < len(msgs) && msgs[t.At].Role == llm.RoleUser && Fingerprint(msgs[t.At]) == t.FP {
		return t.At
	}
	for i := min(t.At, len(msgs)) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && Fingerprint(msgs[i]) == t.FP {
			return i
		}
	}
	return -1
}

// step is one file to put back.
type step struct {
	path string
	to   State
}

// plan checks the undone groups against the files and returns what to
// put back: each file as it was before the first undone turn that changed
// it. A file whose content is not what the last undone turn left, or
// whose content before an undone turn is not what the turn before left,
// changed outside zot: a *ConflictError. The caller holds s.mu.
func (s *Store) plan(msgs []llm.Message, undone []*group) ([]step, error) {
	type track struct {
		to        State
		last      State
		lastKnown bool
		turn      int
	}
	byPath := map[string]*track{}
	var order []string
	turnOf := func(g *group) int {
		pos := position(msgs, g.turn)
		return len(Turns(msgs[:pos])) + 1
	}
	for _, g := range undone {
		n := turnOf(g)
		for _, p := range g.paths {
			c := g.files[p]
			t := byPath[p]
			if t == nil {
				t = &track{to: c.before}
				byPath[p] = t
				order = append(order, p)
			} else if t.lastKnown && !t.last.same(c.before) {
				return nil, &ConflictError{Path: p, Turn: n, Between: true}
			}
			if c.after != nil {
				t.last, t.lastKnown = *c.after, true
			} else {
				// Recorded before a change that never settled (a
				// kill): what it left is unknown, so what is there
				// counts as what it left.
				t.last, t.lastKnown = c.before, false
			}
			t.turn = n
		}
	}
	slices.Sort(order)
	plan := make([]step, 0, len(order))
	for _, p := range order {
		t := byPath[p]
		if t.to.Dir != "" {
			if now := realDir(p); now != t.to.Dir {
				return nil, &ConflictError{Path: p, Turn: t.turn, Moved: now}
			}
		}
		if t.lastKnown {
			now, _, err := s.stat(p, false)
			if err != nil {
				return nil, err
			}
			if !now.same(t.last) {
				return nil, &ConflictError{Path: p, Turn: t.turn}
			}
			if now.same(t.to) {
				continue // the turns left it as it was (a failed edit, say)
			}
		}
		plan = append(plan, step{path: p, to: t.to})
	}
	return plan, nil
}

// restore writes the kept content of st to path, with st's mode. The
// caller holds s.mu.
func (s *Store) restore(path string, st State) error {
	data, err := s.content(st.Hash)
	if err != nil {
		return fmt.Errorf("restoring %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("restoring %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.undo")
	if err != nil {
		return fmt.Errorf("restoring %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(st.Mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("restoring %s: %w", path, err)
	}
	return nil
}

// rewrite replaces the records with those of keep, and removes the
// contents no record names any more. The caller holds s.mu.
func (s *Store) rewrite(keep []*group) error {
	s.groups = keep
	used := map[string]int64{}
	var b strings.Builder
	for _, g := range keep {
		for _, p := range g.paths {
			c := g.files[p]
			if c.before.Kept && c.before.Exists {
				used[c.before.Hash] = c.before.Size
			}
			for _, r := range []record{{Turn: g.turn, Path: p, Before: &c.before}, {Turn: g.turn, Path: p, After: c.after}} {
				if r.Before == nil && r.After == nil {
					continue
				}
				line, err := json.Marshal(r)
				if err != nil {
					return err
				}
				b.Write(line)
				b.WriteByte('\n')
			}
		}
	}
	for h := range s.kept {
		if _, ok := used[h]; ok {
			continue
		}
		delete(s.kept, h)
		if s.dir == "" {
			delete(s.blobs, h)
		} else {
			_ = os.Remove(filepath.Join(s.dir, "blobs", h)) // an orphan costs space, nothing else
		}
	}
	s.used = 0
	for _, n := range used {
		s.used += n
	}
	if s.dir == "" {
		return nil
	}
	if err := atomicfile.Write(filepath.Join(s.dir, logName), []byte(b.String())); err != nil {
		return fmt.Errorf("rewriting checkpoints: %w", err)
	}
	return nil
}
