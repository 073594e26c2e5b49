package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/rpcserver"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/sdk/extwire"
)

// extFlags choose the extensions rpc mode and print mode load.
func extFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ext", Aliases: []string{"e"}, Usage: "rpc and print mode: load the extension in this folder (or this extension.json) first; repeatable (zot ext list lists it too)"},
		&cli.BoolFlag{Name: "no-ext", Usage: "rpc and print mode: load no extension from ./.zot/extensions or the zot home (--ext still loads)"},
		&cli.BoolFlag{Name: "trust-project", Usage: "run the working directory's own extensions (.zot/extensions) and MCP servers (.zot/mcp.json) this once, trusted or not (zot trust trusts a folder for good)"},
		&cli.DurationFlag{Name: "ext-start-timeout", Value: exthost.DefaultStartTimeout, Usage: "how long an extension may take from its start to its hello (its manifest's start_timeout_ms when longer); the first prompt waits for the extensions"},
	}
}

// startExtensions attaches the session's extensions to srv: the --ext
// ones, then, unless --no-ext, the project's and the user's. srv starts
// them in the background once it serves; what they push reaches its
// client.
func startExtensions(cmd *cli.Command, sess *engine.Session, srv *rpcserver.Server, gate *trust.Gate, stderr io.Writer) *exthost.Host {
	h := exthost.New(sess, extConfig(cmd, sess, srv.ExtensionNotice, gate, stderr))
	srv.SetExtensions(h)
	return h
}

// startPrintExtensions starts print mode's extensions, found as rpc mode
// finds them, at once: the prompt waits for their handshakes, so the
// model sees their tools. What they push (notices; print mode shows no
// panels) goes to stderr, one line each.
func startPrintExtensions(cmd *cli.Command, sess *engine.Session, gate *trust.Gate, stderr io.Writer) *exthost.Host {
	var mu sync.Mutex
	notify := func(n exthost.Notice) {
		if n.Kind != exthost.NoticeNotify || n.Logged {
			return
		}
		level := n.Level
		if level == "" {
			level = extwire.NotifyLevelInfo
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "[%s] %s: %s\n", n.Extension, level, oneLineText(n.Message))
	}
	return exthost.Start(sess, extConfig(cmd, sess, notify, gate, stderr))
}

// oneLineText keeps a notice on one line of stderr.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// extConfig is the extension host's configuration the flags give.
func extConfig(cmd *cli.Command, sess *engine.Session, notify func(exthost.Notice), gate *trust.Gate, stderr io.Writer) exthost.Config {
	cfg := exthost.Config{
		Discovery: exthost.Discovery{Paths: cmd.StringSlice("ext")},
		Version:   buildinfo.Version(),
		Log:       stderr,
		Notify:    notify,
		// checkExtStartTimeout refused a bad value before
		StartTimeout: cmd.Duration("ext-start-timeout"),
	}
	if h, err := zotHome(stderr); err == nil {
		cfg.LogDir = h.Logs()
		if !cmd.Bool("no-ext") {
			cfg.GlobalDir = h.Extensions()
		}
	}
	if !cmd.Bool("no-ext") {
		cfg.ProjectDir = filepath.Join(sess.CWD(), trust.ExtensionsDir)
		cfg.Trust = gate
	}
	return cfg
}

// checkExtStartTimeout refuses an --ext-start-timeout that is not
// positive.
func checkExtStartTimeout(cmd *cli.Command) error {
	if cmd.Duration("ext-start-timeout") <= 0 {
		return &exitError{code: 2, msg: "--ext-start-timeout must be positive"}
	}
	return nil
}

// stopExtensions stops the extensions by their shutdown ladder, all at
// once; whatever is left after a few seconds is killed.
func stopExtensions(h *exthost.Host) { stopExtensionsWithin(h, 5*time.Second) }

// stopExtensionsWithin stops the extensions by their shutdown ladder and
// kills what is left after d.
func stopExtensionsWithin(h *exthost.Host, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	h.Close(ctx)
}
