package main

import (
	"io"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/exthost"
	"zot.dev/zot/internal/trust"
)

// doorExtensions is how zot daemon and zot acp find the extensions of a
// session, as rpc mode finds its own: the --ext ones, then, unless
// --no-ext, the session directory's .zot/extensions (when the folder is
// trusted: internal/trust) and the zot home's.
func doorExtensions(cmd *cli.Command, stderr io.Writer) func(cwd string) exthost.Config {
	paths := cmd.StringSlice("ext")
	for i, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			paths[i] = abs
		}
	}
	noExt := cmd.Bool("no-ext")
	trustAll := cmd.Bool("trust-project")
	var store *trust.Store
	startTimeout := cmd.Duration("ext-start-timeout")
	var logDir, global string
	if h, err := zotHome(stderr); err == nil {
		logDir = h.Logs()
		store = &trust.Store{File: h.TrustFile()}
		if !noExt {
			global = h.Extensions()
		}
	}
	return func(cwd string) exthost.Config {
		cfg := exthost.Config{
			Discovery: exthost.Discovery{Paths: paths, GlobalDir: global},
			Version:   buildinfo.Version(),
			LogDir:    logDir,
			Log:       stderr,
			// checkExtStartTimeout refused a bad value before
			StartTimeout: startTimeout,
		}
		if !noExt {
			cfg.ProjectDir = filepath.Join(cwd, trust.ExtensionsDir)
			// Each session says once what its folder's trust left out.
			cfg.Trust = &trust.Gate{Store: store, All: trustAll}
		}
		return cfg
	}
}
