package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/checkpoint"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/wire"
)

// sessionsUndoCommand is `zot sessions undo ID [--turn N]`: the undo of
// /undo, for a stored session no zot has open.
func sessionsUndoCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "undo",
		HideHelpCommand: true,
		Usage:           "undo the last turn of a session, or turn N and every turn after it: the files they changed and their messages",
		ArgsUsage:       "ID",
		Description: `ID is a session's id, or the start of one that no other id shares. Each file
the undone turns changed gets back what it held before them (a file they made
is removed), and the transcript is cut back to before the turn's message.
Refused, restoring nothing, when a file changed outside zot since; a file too
large to record is left as it is and said so. See docs/sessions.md.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "turn", Usage: "the turn to undo, from 1 (the n-th message sent); default the last"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("usage: zot sessions undo ID [--turn N] [--json]")
			}
			if err := onlyFlags(cmd, "zot sessions undo", []string{"turn", "json"}); err != nil {
				return err
			}
			turn := 0
			if cmd.IsSet("turn") {
				if turn = int(cmd.Int("turn")); turn < 1 {
					return usagef("--turn: give a turn from 1")
				}
			}
			s, err := openStore(ctx, std.err)
			if err != nil {
				return err
			}
			e, err := findSession(ctx, s, cmd.Args().First())
			if err != nil {
				return err
			}
			res, err := undoStored(ctx, s, e, turn)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if cmd.Bool("json") {
				return writeJSON(std.out, res)
			}
			_, err = fmt.Fprintln(plainText(std.out), engine.UndoSummary(res))
			return err
		},
	}
}

// undoStored undoes turn (0: the last) of stored session e, holding the
// session's lock throughout; the undone turns are kept in st as a branch
// of e (store.Store.Branch) before its transcript is cut.
func undoStored(ctx context.Context, st *store.Store, e store.Entry, turn int) (wire.UndoResult, error) {
	path := e.Path
	f, msgs, err := sessionfile.Open(path, sessionfile.Options{})
	if errors.Is(err, sessionfile.ErrLocked) {
		return wire.UndoResult{}, fmt.Errorf("the session is open in another zot (a daemon, or a run with --session or --continue): undo it there with /undo, or close it first")
	}
	if err != nil {
		return wire.UndoResult{}, err
	}
	defer f.Close()
	out, err := checkpoint.New(checkpoint.DirFor(path), checkpoint.Limits{}).Undo(msgs, turn)
	if err != nil {
		return wire.UndoResult{}, err
	}
	branch, err := st.Branch(ctx, e.ID, e.CWD, msgs, out.Cut)
	if err != nil {
		return wire.UndoResult{}, fmt.Errorf("the files were restored, but keeping the undone turns failed, so the transcript was left whole: %w", err)
	}
	if err := f.Save(msgs[:out.Cut]); err != nil {
		return wire.UndoResult{}, fmt.Errorf("the files were restored, but cutting the transcript back failed: %w", err)
	}
	if err := f.Sync(); err != nil {
		return wire.UndoResult{}, err
	}
	res := wire.UndoResult{Turn: int64(out.Turn), MessageCount: int64(out.Cut), BranchID: branch.ID, Files: make([]wire.UndoFile, 0, len(out.Files))}
	for _, fo := range out.Files {
		res.Files = append(res.Files, wire.UndoFile{Path: fo.Path, Action: wire.UndoAction(fo.Action), Reason: fo.Reason})
	}
	return res, nil
}
