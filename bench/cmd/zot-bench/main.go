// Command zot-bench runs zot's benchmark: it times `zot rpc` against a
// loopback fake provider, side by side with the floor program and any other
// binary speaking the protocol, and prints a Markdown table. See package
// zot.dev/zot/bench.
//
//	go run ./bench/cmd/zot-bench --zot bin/zot --floor bin/zot-floor [--vs PATH]...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"zot.dev/zot/bench"
)

func main() {
	cfg, err := bench.ParseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "zot-bench: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	report, err := bench.Run(ctx, cfg, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "zot-bench: %v\n", err)
		os.Exit(1)
	}
	if err := report.WriteMarkdown(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "zot-bench: %v\n", err)
		os.Exit(1)
	}
}
