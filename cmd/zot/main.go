// Command zot is the zot agent runtime's command line: `zot rpc` serves
// the NDJSON protocol on stdin and stdout, and `zot -p "prompt"` runs one
// prompt and prints the answer (or, with --json, the event stream).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"

	"github.com/urfave/cli/v3"
)

// received is the signal that interrupted the run, if any.
var received atomic.Int32

// exitError carries a process exit status out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	// zot is a sidecar that embedding apps run next to their own work:
	// collect garbage at half the default heap growth so its footprint
	// stays small (GOGC still overrides this).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin *os.File, stdout, stderr *os.File) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A write to a closed pipe fails with EPIPE instead of killing zot, so
	// zot can abort its work and stop its tools first.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		if s, ok := <-sigs; ok {
			if sig, isSys := s.(syscall.Signal); isSys {
				received.CompareAndSwap(0, int32(sig))
			}
			cancel()
		}
	}()
	// The embedder is gone when nobody reads stdout any more: that ends
	// zot as SIGPIPE would, after the same clean-up as a signal.
	stopWatch := watchOutput(stdout, func() {
		received.CompareAndSwap(0, int32(syscall.SIGPIPE))
		cancel()
	})
	defer func() {
		stopWatch()
		signal.Stop(sigs)
		close(sigs)
		<-watcherDone
	}()
	app := newApp(stdin, stdout, stderr)
	err := app.Run(ctx, args)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "zot:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "zot:", err)
	return 1
}

func newApp(stdin, stdout, stderr *os.File) *cli.Command {
	io := streams{in: stdin, out: stdout, err: stderr}
	return &cli.Command{
		Name:            "zot",
		Usage:           "an agent runtime that other programs embed",
		Version:         version(),
		HideHelpCommand: true,
		Writer:          stdout,
		ErrWriter:       stderr,
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "rpc", Usage: "serve the NDJSON protocol on stdin/stdout (same as `zot rpc`)"},
			&cli.StringFlag{Name: "print", Aliases: []string{"p"}, Usage: "run one prompt and print the answer"},
			&cli.BoolFlag{Name: "json", Usage: "with -p: print the event stream as NDJSON, ending with done"},
			&cli.IntFlag{Name: "max-line-bytes", Usage: "with --rpc: the longest input line accepted", Value: 64 << 20},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			switch {
			case cmd.Bool("rpc"):
				if cmd.IsSet("print") || cmd.IsSet("json") {
					return &exitError{code: 2, msg: "--rpc cannot be combined with -p or --json"}
				}
				return serveRPC(ctx, cmd, io)
			case cmd.IsSet("print"):
				if cmd.IsSet("max-line-bytes") {
					return &exitError{code: 2, msg: "--max-line-bytes only applies to rpc mode"}
				}
				return printMode(ctx, cmd, io)
			case cmd.IsSet("json"):
				return &exitError{code: 2, msg: "--json needs -p \"prompt\""}
			}
			if cmd.Args().Len() > 0 {
				return &exitError{code: 2, msg: fmt.Sprintf("unknown command %q (try zot --help)", cmd.Args().First())}
			}
			return cli.ShowRootCommandHelp(cmd)
		},
		Commands: []*cli.Command{
			{
				Name:  "rpc",
				Usage: "serve the NDJSON protocol on stdin/stdout (see docs/rpc.md)",
				Flags: append(agentFlags(),
					&cli.IntFlag{Name: "max-line-bytes", Usage: "the longest input line accepted; longer lines get line_too_long", Value: 64 << 20},
				),
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() > 0 {
						return &exitError{code: 2, msg: fmt.Sprintf("zot rpc takes no arguments, got %q", cmd.Args().First())}
					}
					return serveRPC(ctx, cmd, io)
				},
			},
		},
	}
}

// streams are the process's standard streams.
type streams struct {
	in       *os.File
	out, err *os.File
}
