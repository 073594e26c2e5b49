package main

import (
	"io"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/exthost"
)

// extFlags choose the extensions rpc mode, print mode and the daemon
// load.
func extFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ext", Aliases: []string{"e"}, Usage: "rpc and print mode: load the extension in this folder (or this extension.json) first; repeatable (zot ext list lists it too)"},
		&cli.BoolFlag{Name: "no-ext", Usage: "rpc and print mode: load no extension from ./.zot/extensions or the zot home (--ext still loads)"},
		&cli.BoolFlag{Name: "trust-project", Usage: "run the working directory's own extensions (.zot/extensions) and MCP servers (.zot/mcp.json) this once, trusted or not (zot trust trusts a folder for good)"},
		&cli.DurationFlag{Name: "ext-start-timeout", Value: exthost.DefaultStartTimeout, Usage: "how long an extension may take from its start to its hello (its manifest's start_timeout_ms when longer); the first prompt waits for the extensions"},
	}
}

// pluginConfig is what the flags say of a session's extensions and MCP
// servers, the same for every door: the --ext extensions, then, unless
// --no-ext, the session directory's .zot/extensions (when the folder is
// trusted: internal/trust) and the zot home's; the MCP servers of the
// zot home's mcp.json and the project's .zot/mcp.json (unless
// --strict-mcp-config), under each --mcp-config file. The engine finds
// and starts them for each session, in its own working directory.
func pluginConfig(cmd *cli.Command, stderr io.Writer) (engine.ExtensionConfig, engine.MCPOptions) {
	paths := cmd.StringSlice("ext")
	for i, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			paths[i] = abs
		}
	}
	ext := engine.ExtensionConfig{
		Paths:        paths,
		Discover:     !cmd.Bool("no-ext"),
		TrustProject: cmd.Bool("trust-project"),
		// checkPluginFlags refused a bad value before
		HandshakeTimeout:     cmd.Duration("ext-start-timeout"),
		HandshakeTimeoutName: "--ext-start-timeout",
	}
	mcp := engine.MCPOptions{
		Files:        cmd.StringSlice("mcp-config"),
		Discover:     !cmd.Bool("strict-mcp-config"),
		StartTimeout: cmd.Duration("mcp-start-timeout"),
	}
	if h, err := zotHome(stderr); err == nil {
		ext.Home = h.Dir
		mcp.LogDir = h.Logs()
	}
	return ext, mcp
}

// checkPluginFlags refuses an --ext-start-timeout or --mcp-start-timeout
// that is not positive.
func checkPluginFlags(cmd *cli.Command) error {
	if cmd.Duration("ext-start-timeout") <= 0 {
		return &exitError{code: 2, msg: "--ext-start-timeout must be positive"}
	}
	if cmd.Duration("mcp-start-timeout") <= 0 {
		return &exitError{code: 2, msg: "--mcp-start-timeout must be positive"}
	}
	return nil
}
