package main

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/rpcserver"
	"zot.dev/zot/internal/store"
)

// rpcCommand is `zot rpc`.
func rpcCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "rpc",
		HideHelpCommand: true,
		Usage:           "serve the NDJSON protocol on stdin/stdout (see docs/rpc.md)",
		Description: `Reads one JSON command per line on stdin and writes responses and events,
one JSON object per line, on stdout; diagnostics go to stderr. At the end
of stdin zot finishes its work and exits 0. With ZOTCORE_RPC_TOKEN set the
first command must be a hello carrying that token. zot --rpc is the same.`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("zot rpc takes no arguments, got %q", cmd.Args().First())
			}
			if err := onlyFlags(cmd, "zot rpc", flagNames(agentFlags(), rpcFlags())); err != nil {
				return err
			}
			return serveRPC(ctx, cmd, std)
		},
	}
}

// serveRPC runs `zot rpc`: exit 0 at the end of input once the work is
// done, 1 when the client fails to authenticate, 130/143 on SIGINT/SIGTERM
// after aborting the work and killing tool processes.
func serveRPC(ctx context.Context, cmd *cli.Command, io streams) error {
	cfg, err := runtimeConfig(cmd, io.err)
	if err != nil {
		return err
	}
	limit := cmd.Int("max-line-bytes")
	if limit < 1024 {
		return &exitError{code: 2, msg: "--max-line-bytes must be at least 1024"}
	}
	token, tokenSet := os.LookupEnv("ZOTCORE_RPC_TOKEN")
	if tokenSet && token == "" {
		return &exitError{code: 2, msg: "ZOTCORE_RPC_TOKEN is set but empty: set a token, or unset it to serve without authentication"}
	}
	// The client can answer permission requests (answer_permission)
	// whatever the first mode: set_mode may ask later. Without
	// --permission or --approve every call runs (mode auto).
	cfg.AnswerApprovals = true
	if cfg.Mode == "" {
		cfg.Mode = engine.ModeAuto
	}
	cfg.ApprovalTimeout = cmd.Duration("approval-timeout")
	if cfg.ApprovalTimeout < 0 {
		return &exitError{code: 2, msg: "--approval-timeout must not be negative"}
	}
	if cmd.IsSet("approval-timeout") && cfg.Mode != engine.ModeAsk {
		return &exitError{code: 2, msg: "--approval-timeout only applies with --approve or --permission ask"}
	}
	// The extensions and MCP servers start shortly after the first
	// command is read (rpcserver.ExtensionLaunchDelay), or at the first
	// that needs them.
	cfg.DeferStart = true
	insp, err := startInspector(cmd, io.err) // inspect.go
	if err != nil {
		return err
	}
	var hostWith []func(*engine.HostConfig)
	if insp != nil {
		defer insp.close()
		hostWith = append(hostWith, insp.host)
	}
	host, sess, err := startSession(cfg, io.err, hostWith...)
	if err != nil {
		return err
	}
	var see func(bool, []byte)
	if insp != nil {
		conn := insp.tap.RPC("stdio", "zot rpc (stdin/stdout)", func() string { return rpcSessionName(sess) })
		see = func(in bool, frame []byte) { conn.Frame(in, time.Now(), frame) }
		defer conn.End()
	}
	srv := rpcserver.New(sess, rpcserver.Options{
		Tap:          see,
		Token:        token,
		MaxLineBytes: limit,
		Log:          io.err,
		// A debugging aid: check every outbound frame against the schema.
		ValidateOutput: os.Getenv("ZOT_VALIDATE") == "1",
		// list_sessions, load_session and fork_session use the zot
		// home's store, opened at the first of them: the process keeps
		// its transcript in memory until a client asks for a stored one.
		Sessions: sync.OnceValues(func() (*store.Store, error) { return openStore(ctx, io.err) }),
	})
	in, restore := pollable(io.in)
	defer restore()
	err = srv.Serve(ctx, in, io.out)
	host.Close() // the session's extensions and MCP servers stop with it
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpcserver.ErrUnauthorized):
		return &exitError{code: 1, msg: "client failed to authenticate"}
	case errors.Is(err, context.Canceled):
		return &exitError{code: 128 + signalNumber(ctx)}
	case errors.Is(err, syscall.EPIPE):
		// The reader of stdout left before zot saw it go: the same end,
		// as quiet, as when it sees it first (SIGPIPE's status).
		return &exitError{code: 128 + int(syscall.SIGPIPE)}
	}
	return &exitError{code: 1, msg: err.Error()}
}

// rpcSessionName names zot rpc's session in the inspector: its stored id,
// or "rpc" while it has none.
func rpcSessionName(s *engine.Session) string {
	if id := s.StoredID(); id != "" {
		return id
	}
	return "rpc"
}
