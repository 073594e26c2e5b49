package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v3"
)

// terminalFlags are the root's flags that only the terminal client reads.
func terminalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "resume", Aliases: []string{"r"}, Local: true,
			Usage: "terminal: pick one of this folder's sessions to open"},
		&cli.BoolFlag{Name: "yolo", Local: true,
			Usage: "terminal: run every tool call without asking (--permission allow)"},
		&cli.BoolFlag{Name: "no-yolo", Local: true,
			Usage: "terminal: ask before each write, edit and bash call (--permission ask, the terminal's default)"},
	}
}

// isTerminal reports whether stdin and stdout are both a terminal.
func isTerminal(std streams) bool {
	return term.IsTerminal(std.in.Fd()) && term.IsTerminal(std.out.Fd())
}

// rootDefault is what zot does with no mode flag: the terminal client
// on a terminal (the arguments are the prompt it starts with); else,
// as before, the help (no arguments) or a usage error, saying why.
func rootDefault(ctx context.Context, cmd *cli.Command, std streams) error {
	if isTerminal(std) {
		return runTerminal(ctx, cmd, std)
	}
	if cmd.Args().Len() > 0 {
		return usagef("unknown command %q (not a terminal, so it is not taken as a prompt: zot -p %q runs it once)", cmd.Args().First(), strings.Join(cmd.Args().Slice(), " "))
	}
	for _, n := range flagNames(terminalFlags()) {
		if cmd.IsSet(n) {
			return usagef("--%s needs a terminal: stdin and stdout are not both one", n)
		}
	}
	fmt.Fprintln(std.err, "zot: stdin or stdout is not a terminal, so the interactive client does not start; zot -p \"prompt\" runs one prompt, zot rpc serves a program")
	return cli.ShowRootCommandHelp(cmd)
}

// attachCommand is `zot attach [socket]`: the terminal client of a
// running daemon.
func attachCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "attach",
		HideHelpCommand: true,
		Usage:           "chat in the terminal with a running zot daemon: pick one of its sessions or start one",
		ArgsUsage:       "[socket | ws[s]://host:port[/acp]]",
		Description: `Connects to the daemon's socket (the argument, else $ZOT_SOCKET, else the
zot home's daemon.sock, as zot daemon finds it) and opens the terminal client
on it: a picker of the daemon's sessions, the first row a new session in the
working directory (--cwd). --session ID opens that session, -c the newest of
the working directory. The daemon keeps its sessions when you leave; its own
flags (provider, model, permission) apply to them, and the model and mode you
choose in a session are put back when you open it again.

A ws:// or wss:// URL connects to a daemon's --listen endpoint instead, with
the token of --token, else $ZOT_TOKEN, else --token-file's. A connection that
drops is made again and the open session resumed: the turn under way goes on
showing from the moment it came back.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "token", Local: true, Usage: "the bearer token for a ws:// or wss:// URL (default: $ZOT_TOKEN)"},
			&cli.StringFlag{Name: "token-file", Local: true, Usage: "a file holding the token for a ws:// or wss:// URL (the token alone, or a line NAME TOKEN)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("zot attach takes at most one socket or URL, got %q", strings.Join(cmd.Args().Slice(), " "))
			}
			if err := onlyFlags(cmd, "zot attach", []string{"cwd", "session", "continue", "token", "token-file"}); err != nil {
				return err
			}
			if cmd.IsSet("session") && cmd.Bool("continue") {
				return usagef("--session and --continue contradict each other")
			}
			if !isTerminal(std) {
				return &exitError{code: 1, msg: "zot attach needs a terminal on stdin and stdout (zot daemon connect relays JSON-RPC lines for programs)"}
			}
			return attach(ctx, cmd, std)
		},
	}
}
