package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
)

// openStore opens the zot home's session store, moving the sessions of
// older layouts into it.
func openStore(ctx context.Context, stderr io.Writer) (*store.Store, error) {
	h, err := zotHome(stderr)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	s, err := store.Open(ctx, h.Sessions(), stderr)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	return s, nil
}

// sessionsCommand is `zot sessions`: the sessions every door keeps under
// the zot home.
func sessionsCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "sessions",
		HideHelpCommand: true,
		Usage:           "list, show, fork, undo, export, import and remove the stored sessions (see docs/sessions.md)",
		Description: `Every door keeps its sessions under $ZOT_HOME/sessions, one file per session:
the daemon always, zot -p and zot rpc with --continue or --session.
A session is named by its id, or by the start of one that no other id shares.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q for zot sessions", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:            "list",
				HideHelpCommand: true,
				Usage:           "list the sessions, newest first (--cwd DIR: those of one folder; --tree: forks under their parents; --json: a JSON array)",
				Flags:           []cli.Flag{&cli.BoolFlag{Name: "tree", Usage: "draw each fork under the session it was forked from"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 0 {
						return usagef("usage: zot sessions list [--cwd DIR] [--tree] [--json]")
					}
					if err := onlyFlags(cmd, "zot sessions list", []string{"cwd", "json", "tree"}); err != nil {
						return err
					}
					s, err := openStore(ctx, std.err)
					if err != nil {
						return err
					}
					var f store.Filter
					if cmd.IsSet("cwd") {
						if f.CWD, err = filepath.Abs(cmd.String("cwd")); err != nil {
							return usagef("--cwd: %v", err)
						}
					}
					list, err := s.List(ctx, f)
					if err != nil {
						return &exitError{code: 1, msg: err.Error()}
					}
					switch {
					case cmd.Bool("tree") && cmd.Bool("json"):
						return writeJSON(std.out, treeOf(list))
					case cmd.Bool("tree"):
						return drawTree(plainText(std.out), treeOf(list))
					case cmd.Bool("json"):
						return writeJSON(std.out, list)
					}
					return listSessions(plainText(std.out), list)
				},
			},
			{
				Name:            "show",
				HideHelpCommand: true,
				Usage:           "show one session: what the index says and its transcript (--json for programs)",
				ArgsUsage:       "ID",
				Description:     `ID is a session's id, or the start of one that no other id shares.`,
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return usagef("usage: zot sessions show ID [--json]")
					}
					if err := onlyFlags(cmd, "zot sessions show", []string{"json"}); err != nil {
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
					var msgs []llm.Message
					if e.Error == "" {
						if msgs, err = sessionfile.Load(e.Path); err != nil {
							e.Error = err.Error()
						}
					}
					if cmd.Bool("json") {
						return writeJSON(std.out, shownSession{Entry: e, Transcript: transcriptOf(msgs)})
					}
					return showSession(plainText(std.out), e, msgs)
				},
			},
			forkCommand(std),         // sessions_edit.go
			rmCommand(std),           // sessions_edit.go
			exportCommand(std),       // sessions_edit.go
			importCommand(std),       // sessions_edit.go
			sessionsUndoCommand(std), // sessions_undo.go
		},
	}
}

// findSession is the session arg names: by its id, or by the start of
// one id only.
func findSession(ctx context.Context, s *store.Store, arg string) (store.Entry, error) {
	e, err := s.Get(ctx, arg)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return e, err
	}
	list, err := s.List(ctx, store.Filter{})
	if err != nil {
		return store.Entry{}, &exitError{code: 1, msg: err.Error()}
	}
	var found []store.Entry
	for _, e := range list {
		if arg != "" && strings.HasPrefix(e.ID, arg) {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return store.Entry{}, &exitError{code: 1, msg: fmt.Sprintf("no session %q (zot sessions list shows them)", arg)}
	}
	return store.Entry{}, &exitError{code: 1, msg: fmt.Sprintf("%q starts %d session ids; give more of it", arg, len(found))}
}

// writeJSON prints v indented, for programs and people alike.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// listSessions prints the list as a table.
func listSessions(w io.Writer, list []store.Entry) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no sessions")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tMESSAGES\tCWD\tTITLE")
	for _, e := range list {
		title := e.Title
		if e.Error != "" {
			title = "(damaged: " + e.Error + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", e.ID, e.Updated.Local().Format(time.DateTime), e.Messages, e.CWD, title)
	}
	return tw.Flush()
}

// shownSession is `zot sessions show --json`: the index's entry and the
// transcript.
type shownSession struct {
	store.Entry
	Transcript []shownMessage `json:"transcript"`
}

// shownMessage is one message of a shown transcript.
type shownMessage struct {
	// Index is the message's position in the transcript, from 0, and
	// ID its message id: either names a prompt to fork at.
	Index   int          `json:"index"`
	ID      string       `json:"id"`
	Role    string       `json:"role"`
	Time    time.Time    `json:"time,omitzero"`
	Content []shownBlock `json:"content"`
}

// shownBlock is one block of a shown message; images show their type
// only.
type shownBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text,omitempty"`
	Name    string          `json:"name,omitempty"`
	ID      string          `json:"id,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	MIME    string          `json:"mime,omitempty"`
}

// transcriptOf is msgs as shown.
func transcriptOf(msgs []llm.Message) []shownMessage {
	out := make([]shownMessage, 0, len(msgs))
	for i, m := range msgs {
		sm := shownMessage{Index: i, ID: store.MessageID(m), Role: string(m.Role), Time: m.Time, Content: []shownBlock{}}
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.TextBlock:
				sm.Content = append(sm.Content, shownBlock{Type: "text", Text: b.Text})
			case *llm.ThinkingBlock:
				sm.Content = append(sm.Content, shownBlock{Type: "thinking", Text: b.Text})
			case *llm.ImageBlock:
				sm.Content = append(sm.Content, shownBlock{Type: "image", MIME: b.MIME})
			case *llm.ToolCallBlock:
				sm.Content = append(sm.Content, shownBlock{Type: "tool_call", Name: b.Name, ID: b.ID, Args: b.Args})
			case *llm.ToolResultBlock:
				sm.Content = append(sm.Content, shownBlock{Type: "tool_result", Name: b.Name, ID: b.CallID, IsError: b.IsError, Text: toolResultText(b)})
			}
		}
		out = append(out, sm)
	}
	return out
}

// toolResultText is the text of a tool result.
func toolResultText(b *llm.ToolResultBlock) string {
	var parts []string
	for _, c := range b.Content {
		if t, ok := c.(*llm.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// showSession prints a session for people.
func showSession(w io.Writer, e store.Entry, msgs []llm.Message) error {
	fmt.Fprintf(w, "session  %s\nfile     %s\ncwd      %s\ncreated  %s\nupdated  %s\nmessages %d\n",
		e.ID, e.Path, e.CWD, e.Created.Local().Format(time.DateTime), e.Updated.Local().Format(time.DateTime), e.Messages)
	if e.Model != "" {
		fmt.Fprintf(w, "model    %s\n", e.Model)
	}
	switch {
	case e.Parent != "" && e.ParentCall != "":
		fmt.Fprintf(w, "sub-agent of %s, task call %s\n", e.Parent, e.ParentCall)
	case e.Parent != "":
		fmt.Fprintf(w, "fork of  %s%s\n", e.Parent, forkedAt(e))
	}
	if e.Error != "" {
		fmt.Fprintf(w, "damaged  %s\n", e.Error)
	}
	for i, m := range transcriptOf(msgs) {
		if store.IsPrompt(msgs[i]) {
			// The position and id a fork at this prompt is asked by.
			fmt.Fprintf(w, "\n[%s #%d %s]\n", m.Role, m.Index, m.ID)
		} else {
			fmt.Fprintf(w, "\n[%s]\n", m.Role)
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				fmt.Fprintln(w, b.Text)
			case "thinking":
				fmt.Fprintf(w, "(thinking) %s\n", b.Text)
			case "image":
				fmt.Fprintf(w, "(image %s)\n", b.MIME)
			case "tool_call":
				fmt.Fprintf(w, "→ %s %s\n", b.Name, b.Args)
			case "tool_result":
				mark := "←"
				if b.IsError {
					mark = "← error:"
				}
				fmt.Fprintf(w, "%s %s\n", mark, b.Text)
			}
		}
	}
	return nil
}

// storedSessionFile is the file --session names: an existing file, else
// a stored session's id, else a new file at that path; id is the stored
// session's id when it names one, else "".
func storedSessionFile(ctx context.Context, arg string, stderr io.Writer) (path, id string, err error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() || !store.ValidID(arg) {
		return arg, "", nil
	}
	s, err := openStore(ctx, stderr)
	if err != nil {
		return "", "", err
	}
	if s.Has(arg) {
		return s.Path(arg), arg, nil
	}
	return arg, "", nil
}
