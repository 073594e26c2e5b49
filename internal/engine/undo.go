package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/checkpoint"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Checkpoints and undo (internal/checkpoint): the tool middleware
// innermost in every session's chain records, before a turn first changes
// a file, what the file held, so that Undo can put it back. write and
// edit name their file; for bash, the git work tree of the session's
// folder is compared before and after the command. The records live
// beside the session's file (checkpoint.DirFor), or in memory for a
// session kept nowhere.

// undoState is what the session keeps about its turns' changes.
type undoState struct {
	store *checkpoint.Store

	mu   sync.Mutex
	at   int    // index of the running prompt's user message
	fp   string // its fingerprint, once a change needed it
	live bool   // a prompt runs
}

// beginTurn notes that a prompt starts: its user message will be at
// index at of the transcript. It returns the function that notes its end.
func (u *undoState) beginTurn(at int) (end func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.at, u.fp, u.live = at, "", true
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.live = false
	}
}

// checkpointDir is where a session's checkpoints live: beside its file,
// or nowhere (in memory) for a session kept in memory only.
func checkpointDir(cfg SessionConfig) string {
	if cfg.SessionFile == "" {
		return ""
	}
	return checkpoint.DirFor(cfg.SessionFile)
}

// turn returns the running prompt's Turn; ok is false outside a prompt.
func (s *Session) turn() (checkpoint.Turn, bool) {
	u := &s.undo
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.live {
		return checkpoint.Turn{}, false
	}
	if u.fp == "" {
		msgs := s.agent.Transcript()
		if u.at >= len(msgs) || msgs[u.at].Role != llm.RoleUser {
			return checkpoint.Turn{}, false
		}
		u.fp = checkpoint.Fingerprint(msgs[u.at])
	}
	return checkpoint.Turn{At: u.at, FP: u.fp}, true
}

// recordChanges is the tool middleware that records what write, edit and
// bash calls change.
func (s *Session) recordChanges(next agent.ToolFunc) agent.ToolFunc {
	return func(ctx context.Context, run agent.ToolRun) (tools.Result, error) {
		if run.Name != "write" && run.Name != "edit" && run.Name != "bash" {
			return next(ctx, run)
		}
		t, ok := s.turn()
		if !ok {
			return next(ctx, run)
		}
		if run.Name == "bash" {
			snap := s.undo.store.SnapshotGit(ctx, s.cwd)
			res, err := next(ctx, run)
			if rerr := s.undo.store.AfterGit(context.WithoutCancel(ctx), t, snap); rerr != nil {
				s.logf("zot: recording what a command changed: %v\n", rerr)
			}
			return res, err
		}
		var args struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(run.Args, &args) != nil || args.Path == "" {
			return next(ctx, run)
		}
		path := tools.ResolvePath(s.cwd, args.Path)
		if err := s.undo.store.Before(t, path); err != nil {
			s.logf("zot: %v\n", err)
			return next(ctx, run)
		}
		res, err := next(ctx, run)
		if aerr := s.undo.store.After(t, path); aerr != nil {
			s.logf("zot: %v\n", aerr)
		}
		return res, err
	}
}

// logf writes a diagnostic to the session's log.
func (s *Session) logf(format string, args ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, format, args...)
	}
}

// UndoResult is what Undo did.
type UndoResult = wire.UndoResult

// Undo undoes turn (from 1: the turn-th user message of the transcript;
// 0 for the last) and every turn after it: each file they changed gets
// back what it held before the turn (checkpoint.Store.Undo), and the
// transcript is cut back to before the turn's user message. A stored
// session keeps the undone turns first, as a new session in the store
// forked at the undone turn (UndoResult.BranchID); when they cannot be
// kept, the files are back but the transcript is left whole, and Undo
// says so in its error. It fails
// with a *checkpoint.ConflictError (code changed_outside), changing
// nothing, when a file changed outside zot since; with code not_found
// when there is no such turn; with ErrBusy while work runs or waits.
func (s *Session) Undo(turn int) (UndoResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idleLocked(); err != nil {
		return UndoResult{}, err
	}
	msgs := s.agent.Transcript()
	out, err := s.undo.store.Undo(msgs, turn)
	if err != nil {
		return UndoResult{}, err
	}
	// The files are back; before the transcript is cut, the undone turns
	// are kept as a branch of a stored session, so nothing sent is lost.
	branch := ""
	if s.storedID != "" && s.store != nil {
		st, err := store.Open(context.Background(), filepath.Dir(s.store.Path()), s.log)
		var e store.Entry
		if err == nil {
			e, err = st.Branch(context.Background(), s.storedID, s.cwd, msgs, out.Cut)
		}
		if err != nil {
			return UndoResult{}, fmt.Errorf("the files were restored, but keeping the undone turns failed, so the transcript was left whole: %w", err)
		}
		branch = e.ID
	}
	if err := s.agent.SetTranscript(msgs[:out.Cut]); err != nil {
		return UndoResult{}, fmt.Errorf("cutting the transcript back: %w", err)
	}
	res := UndoResult{Turn: int64(out.Turn), MessageCount: int64(out.Cut), BranchID: branch, Files: make([]wire.UndoFile, 0, len(out.Files))}
	for _, f := range out.Files {
		res.Files = append(res.Files, wire.UndoFile{Path: f.Path, Action: wire.UndoAction(f.Action), Reason: f.Reason})
	}
	return res, s.persistAndSync()
}

// runUndo serves /undo [turn].
func runUndo(_ context.Context, s *Session, args string) (CommandRun, error) {
	turn := 0
	if args != "" {
		n, err := strconv.Atoi(args)
		if err != nil || n < 1 {
			return refusal(fmt.Sprintf("%q is not a turn: give its number, from 1 (the n-th message you sent), or nothing for the last.", args)), nil
		}
		turn = n
	}
	res, err := s.Undo(turn)
	if err != nil {
		if wire.CodeOf(err) == wire.CodeNotFound || wire.CodeOf(err) == wire.CodeChangedOutside {
			return refusal(err.Error()), nil
		}
		return CommandRun{}, err
	}
	run := display(UndoSummary(res))
	run.Changed.Transcript = true
	return run, nil
}

// UndoSummary says what an undo did, for people.
func UndoSummary(res UndoResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d", res.Turn)
	b.WriteString(" and after were undone")
	if len(res.Files) == 0 {
		b.WriteString("; they changed no file.")
	} else {
		b.WriteString(":")
	}
	for _, f := range res.Files {
		switch f.Action {
		case wire.UndoActionNotUndoable:
			fmt.Fprintf(&b, "\n- %s: not undone (%s)", f.Path, f.Reason)
		default:
			fmt.Fprintf(&b, "\n- %s: %s", f.Path, f.Action)
		}
	}
	return b.String()
}
