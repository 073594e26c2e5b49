package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/atomicfile"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
)

// forkCommand is `zot sessions fork`.
func forkCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "fork",
		HideHelpCommand: true,
		Usage:           "make a new session from a session's messages before one of its prompts (--at: its position or message id; default the last prompt)",
		ArgsUsage:       "ID",
		Description: `The fork holds the messages before the prompt, keeps a link to its parent
(list --tree draws them), and is printed with the prompt left out, to be sent
again or edited: zot --session NEWID -p "…" goes on from there. The parent is
never changed. zot sessions show ID lists each prompt's position and id.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "at", Usage: "the prompt to fork at: its position in the transcript (from 0) or its message id"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("usage: zot sessions fork ID [--at N|MESSAGE-ID] [--json]")
			}
			if err := onlyFlags(cmd, "zot sessions fork", []string{"json", "at"}); err != nil {
				return err
			}
			s, err := openStore(ctx, std.err)
			if err != nil {
				return err
			}
			e, err := findSession(ctx, s, cmd.Args().First())
			if err != nil {
				return err
			}
			f, err := s.Fork(ctx, e.ID, store.ParseForkPoint(cmd.String("at")))
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			prompt := transcriptOf([]llm.Message{f.Message})
			prompt[0].Index = f.At
			if cmd.Bool("json") {
				return writeJSON(std.out, forkedJSON{Session: f.Entry, AtIndex: f.At, MessageID: f.MessageID, Message: prompt[0]})
			}
			out := plainText(std.out)
			fmt.Fprintf(out, "%s\nforked from %s before prompt #%d (%s):\n", f.ID, e.ID, f.At, f.MessageID)
			for _, b := range prompt[0].Content {
				if b.Type == "text" {
					fmt.Fprintln(out, b.Text)
				}
			}
			return nil
		},
	}
}

// forkedJSON is `zot sessions fork --json`.
type forkedJSON struct {
	Session   store.Entry  `json:"session"`
	AtIndex   int          `json:"at_index"`
	MessageID string       `json:"message_id"`
	Message   shownMessage `json:"message"`
}

// rmCommand is `zot sessions rm`.
func rmCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "rm",
		HideHelpCommand: true,
		Usage:           "remove sessions: their files and index entries (never one another zot has open)",
		ArgsUsage:       "ID...",
		Description: `A session open in a running daemon or a zot --session run is refused and kept;
the others named are removed. Forks of a removed session stay, listed as roots.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usagef("usage: zot sessions rm ID... [--json]")
			}
			if err := onlyFlags(cmd, "zot sessions rm", []string{"json"}); err != nil {
				return err
			}
			s, err := openStore(ctx, std.err)
			if err != nil {
				return err
			}
			res := removedJSON{Removed: []string{}, Failed: []removeFailure{}}
			for _, arg := range cmd.Args().Slice() {
				e, err := findSession(ctx, s, arg)
				if err == nil {
					err = s.Remove(ctx, e.ID)
					if errors.Is(err, sessionfile.ErrLocked) {
						err = fmt.Errorf("session %s is open in another zot (a daemon, or a run with --session or --continue); close it there first", e.ID)
					}
				}
				if err != nil {
					var xe *exitError
					msg := err.Error()
					if errors.As(err, &xe) {
						msg = xe.msg
					}
					res.Failed = append(res.Failed, removeFailure{ID: arg, Error: msg})
					continue
				}
				res.Removed = append(res.Removed, e.ID)
			}
			if cmd.Bool("json") {
				if err := writeJSON(std.out, res); err != nil {
					return err
				}
			} else {
				for _, id := range res.Removed {
					fmt.Fprintf(std.out, "removed %s\n", id)
				}
			}
			if len(res.Failed) > 0 {
				msgs := make([]string, len(res.Failed))
				for i, f := range res.Failed {
					msgs[i] = f.Error
				}
				return &exitError{code: 1, msg: strings.Join(msgs, "\n")}
			}
			return nil
		},
	}
}

// removedJSON is `zot sessions rm --json`.
type removedJSON struct {
	Removed []string        `json:"removed"`
	Failed  []removeFailure `json:"failed"`
}

// removeFailure is a session rm could not remove.
type removeFailure struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

// exportCommand is `zot sessions export`.
func exportCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "export",
		HideHelpCommand: true,
		Usage:           "write a session as one portable JSON file: its transcript and what the index says, no credentials",
		ArgsUsage:       "ID",
		Description: `Printed, or written to --output FILE (whole or not at all). The file holds the
messages as the session does (tool output included, so read it before sharing)
and never an API key or a request header. zot sessions import reads it.`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the export to this file instead of stdout"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("usage: zot sessions export ID [--output FILE] [--json]")
			}
			if err := onlyFlags(cmd, "zot sessions export", []string{"json", "output"}); err != nil {
				return err
			}
			s, err := openStore(ctx, std.err)
			if err != nil {
				return err
			}
			e, err := findSession(ctx, s, cmd.Args().First())
			if err != nil {
				return err
			}
			out := cmd.String("output")
			if out == "" || out == "-" {
				if err := s.Export(ctx, e.ID, std.out); err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				return nil
			}
			var buf bytes.Buffer
			if err := s.Export(ctx, e.ID, &buf); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if err := atomicfile.Write(out, buf.Bytes()); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("writing the export: %v", err)}
			}
			if cmd.Bool("json") {
				return writeJSON(std.out, exportedJSON{ID: e.ID, Path: out, Bytes: buf.Len()})
			}
			fmt.Fprintf(std.out, "exported %s to %s\n", e.ID, out)
			return nil
		},
	}
}

// exportedJSON is `zot sessions export --output FILE --json`.
type exportedJSON struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// maxImportBytes bounds what import reads: far more than any transcript
// a model's context holds, images included.
const maxImportBytes = 1 << 30

// importCommand is `zot sessions import`.
func importCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "import",
		HideHelpCommand: true,
		Usage:           "store an exported session (a file, or - for stdin) as a new session with a new id",
		ArgsUsage:       "FILE",
		Description: `Its working directory is --cwd DIR when given, else the one it was exported
from when that folder exists here, else the current directory.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usagef("usage: zot sessions import FILE|- [--cwd DIR] [--json]")
			}
			if err := onlyFlags(cmd, "zot sessions import", []string{"json", "cwd"}); err != nil {
				return err
			}
			var in io.Reader = std.in
			if name := cmd.Args().First(); name != "-" {
				f, err := os.Open(name)
				if err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				defer f.Close()
				in = f
			}
			data, err := io.ReadAll(io.LimitReader(in, maxImportBytes+1))
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("reading the export: %v", err)}
			}
			if len(data) > maxImportBytes {
				return &exitError{code: 1, msg: fmt.Sprintf("the export is larger than %d MiB", maxImportBytes>>20)}
			}
			cwd, err := importCWD(cmd, data)
			if err != nil {
				return err
			}
			s, err := openStore(ctx, std.err)
			if err != nil {
				return err
			}
			im, err := s.Import(ctx, bytes.NewReader(data), store.ImportOptions{CWD: cwd})
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if cmd.Bool("json") {
				return writeJSON(std.out, importedJSON{Entry: im.Entry, From: im.From})
			}
			fmt.Fprintf(plainText(std.out), "%s\nimported (exported as %s), %d messages, in %s\n", im.ID, im.From, im.Messages, im.CWD)
			return nil
		},
	}
}

// importedJSON is `zot sessions import --json`: the new session's entry
// and the id it was exported as.
type importedJSON struct {
	store.Entry
	From string `json:"imported_from"`
}

// importCWD is the working directory of an imported session: --cwd,
// else the exported one when it is a folder here, else the current one.
func importCWD(cmd *cli.Command, data []byte) (string, error) {
	if cmd.IsSet("cwd") {
		cwd, err := filepath.Abs(cmd.String("cwd"))
		if err != nil {
			return "", usagef("--cwd: %v", err)
		}
		return cwd, nil
	}
	if cwd := store.ExportedCWD(data); cwd != "" {
		if st, err := os.Stat(cwd); err == nil && st.IsDir() {
			return cwd, nil
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", &exitError{code: 1, msg: err.Error()}
	}
	return cwd, nil
}

// sessionNode is a session of `zot sessions list --tree`, with its forks
// and its sub-agents' sessions.
type sessionNode struct {
	store.Entry
	Children []*sessionNode `json:"children"`
}

// treeOf arranges list (newest first) as trees: each fork under the
// session it was forked from, in list order; a fork whose parent is not
// in list (removed, or left out by --cwd) is a root.
func treeOf(list []store.Entry) []*sessionNode {
	nodes := make(map[string]*sessionNode, len(list))
	for _, e := range list {
		nodes[e.ID] = &sessionNode{Entry: e, Children: []*sessionNode{}}
	}
	roots := []*sessionNode{}
	for _, e := range list {
		n := nodes[e.ID]
		if p, ok := nodes[e.Parent]; ok && e.Parent != "" && !descends(nodes, e.Parent, e.ID) {
			p.Children = append(p.Children, n)
			continue
		}
		roots = append(roots, n)
	}
	return roots
}

// descends reports whether session id is an ancestor of from (or from
// itself), following parents through nodes: a loop of parents (only a
// hand-edited file makes one) is broken, never followed forever.
func descends(nodes map[string]*sessionNode, from, id string) bool {
	for seen := 0; from != "" && seen <= len(nodes); seen++ {
		if from == id {
			return true
		}
		n, ok := nodes[from]
		if !ok {
			return false
		}
		from = n.Parent
	}
	return from != ""
}

// drawTree prints the trees of treeOf.
func drawTree(w io.Writer, roots []*sessionNode) error {
	if len(roots) == 0 {
		_, err := fmt.Fprintln(w, "no sessions")
		return err
	}
	var draw func(n *sessionNode, lead, branch string)
	draw = func(n *sessionNode, lead, branch string) {
		title := n.Title
		switch {
		case n.Error != "":
			title = "(damaged: " + n.Error + ")"
		case title == "" && n.Messages == 0:
			title = "(empty)"
		}
		note := ""
		switch {
		case n.ParentCall != "" && branch == "":
			note = "  (sub-agent of " + n.Parent + ", task call " + n.ParentCall + ")"
		case n.ParentCall != "":
			note = "  (sub-agent, task call " + n.ParentCall + ")"
		case n.Parent != "" && branch == "":
			note = "  (fork of " + n.Parent + ")"
		}
		fmt.Fprintf(w, "%s%s%s  %s  %3d msgs  %s%s%s\n", lead, branch, n.ID, n.Updated.Local().Format(time.DateTime), n.Messages, forkMark(n.Entry), title, note)
		next := lead
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, c := range n.Children {
			b := "├─ "
			if i == len(n.Children)-1 {
				b = "└─ "
			}
			draw(c, next, b)
		}
	}
	for _, r := range roots {
		draw(r, "", "")
	}
	return nil
}

// forkMark is where a fork was made, at the start of its title.
func forkMark(e store.Entry) string {
	if e.ForkIndex == nil {
		return ""
	}
	return "@" + strconv.Itoa(*e.ForkIndex) + " "
}

// forkedAt says where fork e was made, for show.
func forkedAt(e store.Entry) string {
	if e.ForkIndex == nil {
		return ""
	}
	return fmt.Sprintf(", before its prompt #%d (%s)", *e.ForkIndex, e.ForkMessage)
}
