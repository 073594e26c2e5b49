package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/trust"
)

// projectTrust is the trust gate of one run: the zot home's trust store,
// and --trust-project. Without a zot home no folder is trusted but by
// --trust-project.
func projectTrust(cmd *cli.Command, stderr io.Writer) *trust.Gate {
	g := &trust.Gate{All: cmd.Bool("trust-project")}
	if h, err := zotHome(stderr); err == nil {
		g.Store = &trust.Store{File: h.TrustFile()}
	}
	return g
}

// trustStore is the zot home's trust store.
func trustStore(stderr io.Writer) (*trust.Store, error) {
	h, err := zotHome(stderr)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	return &trust.Store{File: h.TrustFile()}, nil
}

// folderArg is the folder a trust command names: its one argument, or
// the working directory.
func folderArg(cmd *cli.Command, name string) (string, error) {
	switch cmd.Args().Len() {
	case 0:
		return os.Getwd()
	case 1:
		return cmd.Args().First(), nil
	}
	return "", usagef("zot %s takes at most one folder, got %q", name, strings.Join(cmd.Args().Slice(), " "))
}

// trustCommand is `zot trust [dir]` and `zot trust --list`.
func trustCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "trust",
		HideHelpCommand: true,
		Usage:           "let a project folder run its own extensions and MCP servers (.zot/extensions, .zot/mcp.json)",
		ArgsUsage:       "[dir]",
		Description: `A folder's own extensions (.zot/extensions/*) and MCP servers (.zot/mcp.json)
run only once you trust it, so that opening someone else's repository does
not run its code; the allow rules of its .zot/settings.json apply only then
too. zot trust records the folder (the working directory by default) by its
real path, with a hash of .zot/mcp.json, .zot/settings.json and every
.zot/extensions/*/extension.json: when one of them changes, zot asks again.
--list shows the trusted folders and whether they changed since, and the
folders whose trust you declined when the terminal asked (it does not ask
there again). zot untrust forgets a folder, trusted or declined;
--trust-project trusts the working directory for one run.
A folder whose .zot another user owns is never trusted for good: that user
could change the programs it runs. Your own extensions and servers (the zot
home's, --ext, --mcp-config) always run.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "list", Usage: "list the trusted folders"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			store, err := trustStore(std.err)
			if err != nil {
				return err
			}
			if cmd.Bool("list") {
				if cmd.Args().Len() > 0 {
					return usagef("zot trust --list takes no folder")
				}
				return listTrusted(store, std.out)
			}
			dir, err := folderArg(cmd, "trust")
			if err != nil {
				return err
			}
			p, err := trust.Inspect(dir)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if p.Foreign != "" {
				return &exitError{code: 1, msg: fmt.Sprintf("not trusting %s: %s belongs to another user (uid %d), who could change what it runs; pass --trust-project to run it once", p.Dir, p.Foreign, p.ForeignUID)}
			}
			if _, err := store.Trust(p); err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			fmt.Fprintf(std.out, "trusted %s: %s\n", p.Dir, runs(p))
			return nil
		},
	}
}

// untrustCommand is `zot untrust [dir]`.
func untrustCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "untrust",
		HideHelpCommand: true,
		Usage:           "stop trusting a project folder (zot trust)",
		ArgsUsage:       "[dir]",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			store, err := trustStore(std.err)
			if err != nil {
				return err
			}
			dir, err := folderArg(cmd, "untrust")
			if err != nil {
				return err
			}
			found, declined, err := store.Untrust(dir)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if !found && declined {
				fmt.Fprintf(std.out, "%s was declined; zot asks again the next time it opens there\n", dir)
				return nil
			}
			if !found {
				fmt.Fprintf(std.out, "%s was not trusted\n", dir)
				return nil
			}
			fmt.Fprintf(std.out, "no longer trusted: %s\n", dir)
			return nil
		},
	}
}

// runs says what a trusted folder runs.
func runs(p trust.Project) string {
	var what []string
	if len(p.Extensions) > 0 {
		what = append(what, "extensions "+strings.Join(p.Extensions, ", "))
	}
	if p.MCP {
		if len(p.MCPServers) > 0 {
			what = append(what, "MCP servers "+strings.Join(p.MCPServers, ", "))
		} else {
			what = append(what, "the MCP servers of .zot/mcp.json")
		}
	}
	rules := ""
	if p.Settings {
		rules = "; the allow rules of .zot/settings.json apply"
	}
	if len(what) == 0 {
		return "it has no extensions or MCP servers of its own yet (adding some asks again)" + rules
	}
	return "its " + strings.Join(what, " and ") + " will run" + rules
}

// listTrusted writes the trusted folders, each with whether it is as it
// was trusted.
func listTrusted(store *trust.Store, w io.Writer) error {
	list, err := store.List()
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	declined, err := store.ListDeclined()
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "no trusted folders")
	}
	for _, e := range list {
		state := "trusted"
		switch p, err := trust.Inspect(e.Dir); {
		case err != nil:
			state = "gone"
		case p.Foreign != "":
			state = fmt.Sprintf("not honoured: %s belongs to uid %d", p.Foreign, p.ForeignUID)
		case p.Hash != e.Hash:
			state = "changed since trusted: zot asks again"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Dir, e.Trusted.Format("2006-01-02"), state)
	}
	for _, e := range declined {
		fmt.Fprintf(w, "%s\t%s\tdeclined: not asked again (zot trust runs it, zot untrust asks again)\n", e.Dir, e.Trusted.Format("2006-01-02"))
	}
	return nil
}
