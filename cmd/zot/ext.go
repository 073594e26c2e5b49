package main

import (
	"context"
	"io"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/rpcserver"
)

// extFlags choose the extensions rpc mode loads.
func extFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ext", Aliases: []string{"e"}, Usage: "rpc mode: load the extension in this folder (or this extension.json) first; repeatable"},
		&cli.BoolFlag{Name: "no-ext", Usage: "rpc mode: load no extension from ./.zot/extensions or the zot home (--ext still loads)"},
	}
}

// startExtensions attaches the session's extensions to srv: the --ext
// ones, then, unless --no-ext, the project's and the user's. srv starts
// them in the background once it serves; what they push reaches its
// client.
func startExtensions(cmd *cli.Command, sess *engine.Session, srv *rpcserver.Server, stderr io.Writer) *exthost.Host {
	cfg := exthost.Config{
		Discovery: exthost.Discovery{Paths: cmd.StringSlice("ext")},
		Version:   buildinfo.Version(),
		Log:       stderr,
		Notify:    srv.ExtensionNotice,
	}
	if h, err := zotHome(stderr); err == nil {
		cfg.LogDir = h.Logs()
		if !cmd.Bool("no-ext") {
			cfg.GlobalDir = h.Extensions()
		}
	}
	if !cmd.Bool("no-ext") {
		cfg.ProjectDir = filepath.Join(sess.CWD(), ".zot", "extensions")
	}
	h := exthost.New(sess, cfg)
	srv.SetExtensions(h)
	return h
}

// stopExtensions stops the extensions by their shutdown ladder, all at
// once; whatever is left after a few seconds is killed.
func stopExtensions(h *exthost.Host) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.Close(ctx)
}
