package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/trust"
)

// mcpFlags are the flags of the MCP servers, read by print mode and rpc
// mode alike.
func mcpFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "mcp-config", Usage: `MCP servers from this {"mcpServers": {...}} JSON file, over ./.zot/mcp.json and the zot home's mcp.json; repeatable, a later file winning per name`},
		&cli.BoolFlag{Name: "strict-mcp-config", Usage: "use only the MCP servers of --mcp-config, not ./.zot/mcp.json nor the zot home's mcp.json"},
		&cli.DurationFlag{Name: "mcp-start-timeout", Value: mcphost.DefaultStartTimeout, Usage: "how long the first prompt waits for MCP servers still starting"},
	}
}

// mcpServers returns the servers the flags and the config files name:
// the home's mcp.json, under the project's .zot/mcp.json (when gate
// trusts the folder; a refusal is told on stderr and to tell, once per
// gate), under each --mcp-config file. A broken file found by discovery
// is reported and skipped; a broken --mcp-config file is an error.
func mcpServers(cmd *cli.Command, cwd string, gate *trust.Gate, tell func(exthost.Notice), stderr io.Writer) ([]mcphost.Server, error) {
	var list []mcphost.Server
	if !cmd.Bool("strict-mcp-config") {
		homeFile := ""
		if h, err := zotHome(stderr); err == nil {
			homeFile = h.MCPConfig()
		}
		found, problems, untrusted := mcphost.DiscoverTrusted(cwd, homeFile, gate)
		if untrusted != nil && gate.FirstReport(*untrusted) {
			n := exthost.TrustNotice(*untrusted)
			fmt.Fprintf(stderr, "zot: %s\n", n.Message)
			if tell != nil {
				tell(n)
			}
		}
		for _, p := range problems {
			fmt.Fprintf(stderr, "zot: %v (its servers are skipped)\n", p)
		}
		list = found
	}
	for _, path := range cmd.StringSlice("mcp-config") {
		more, err := mcphost.LoadFile(path)
		if err != nil {
			return nil, &exitError{code: 1, msg: err.Error()}
		}
		list = mcphost.Merge(list, more)
	}
	return list, nil
}

// startMCP attaches an MCP manager to sess and adds the servers the flags
// and files name. Each stdio server's stderr goes to the zot home's
// logs/mcp-<name>.log. deferred holds them back until the manager's Launch (or
// the first prompt) so that a door answers its first command first.
//
// The project's own servers start only when gate trusts its folder
// (internal/trust); tell, when set, is told a refusal besides stderr.
func startMCP(cmd *cli.Command, sess *engine.Session, notify func(mcphost.Notice), deferred bool, gate *trust.Gate, tell func(exthost.Notice), stderr io.Writer) (*mcphost.Manager, error) {
	if d := cmd.Duration("mcp-start-timeout"); d <= 0 {
		return nil, &exitError{code: 2, msg: "--mcp-start-timeout must be positive"}
	}
	servers, err := mcpServers(cmd, sess.CWD(), gate, tell, stderr)
	if err != nil {
		return nil, err
	}
	logDir := ""
	if h, err := zotHome(stderr); err == nil {
		logDir = h.Logs()
	}
	m := mcphost.New(sess, mcphost.Config{
		LogDir:        logDir,
		Log:           stderr,
		Notify:        notify,
		StartTimeout:  cmd.Duration("mcp-start-timeout"),
		Deferred:      deferred,
		ClientName:    "zot",
		ClientVersion: buildinfo.Version(),
	})
	if err := m.AddServers(context.Background(), servers); err != nil {
		m.Close()
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	return m, nil
}
