// Command prompt runs one prompt through `zot rpc` with package rpcclient
// and prints the answer (its printing is written against client.Client,
// which an in-process sdk.Runtime implements too):
//
//	prompt [-zot PATH] [-- ZOT_FLAGS...] MESSAGE
//
// The answer's text goes to stdout as it streams; tool calls and usage go
// to stderr. It exits 0 when the prompt is done, 1 when it failed (an
// `error` event) or zot could not be run, 2 on bad arguments. PATH
// defaults to $ZOT_BIN, else zot on PATH, as in every client. Offline:
//
//	go run ./clients/go/prompt -zot bin/zot -- --provider scripted "hello"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the program: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prompt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("zot", "", "the zot binary (default: $ZOT_BIN, else zot on PATH)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: prompt [-zot PATH] [-- ZOT_FLAGS...] MESSAGE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return 2
	}
	flags, message := rest[:len(rest)-1], rest[len(rest)-1]

	c, err := rpcclient.Start(ctx, rpcclient.Options{Bin: *bin, Args: flags, Stderr: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "prompt:", err)
		return 1
	}
	failed := prompt(ctx, c, message, stdout, stderr)
	if err := c.Close(); err != nil {
		fmt.Fprintln(stderr, "prompt:", err)
		failed = true
	}
	if failed {
		return 1
	}
	return 0
}

// prompt sends message and prints its events; it reports whether the
// prompt failed. When ctx ends (an interrupt) the client aborts the work,
// whose events then end with turn_end (stop "aborted") and done.
func prompt(ctx context.Context, c client.Client, message string, stdout, stderr io.Writer) (failed bool) {
	events, err := c.Prompt(ctx, message, nil)
	if err != nil {
		fmt.Fprintln(stderr, "prompt:", err)
		return true
	}
	last := ""     // the end of the text written so far
	apart := false // the next text starts a message after one with text
	// note writes a line to stderr, ending the text's line first: on a
	// terminal the two streams share the screen.
	note := func(format string, args ...any) {
		if last != "" && !strings.HasSuffix(last, "\n") {
			fmt.Fprintln(stdout)
			last = "\n"
		}
		fmt.Fprintf(stderr, format, args...)
	}
	for ev := range events { // closed after the done
		switch ev := ev.(type) {
		case *wire.TextDeltaEvent:
			if ev.Delta != "" && apart {
				fmt.Fprintln(stdout) // a blank line between two messages' texts
				apart = false
			}
			fmt.Fprint(stdout, ev.Delta)
			if ev.Delta != "" {
				last = ev.Delta
			}
		case *wire.AssistantMessageEvent:
			// A message ended: end its line (before stderr lines), and
			// set the next message's text apart.
			if last != "" && !strings.HasSuffix(last, "\n") {
				fmt.Fprintln(stdout)
				last = "\n"
			}
			apart = last != ""
		case *wire.ToolCallEvent:
			note("[tool] %s %s\n", ev.Name, ev.Args)
		case *wire.UsageEvent:
			note("[usage] in %d out %d cache %d/%d cost %s (total %s)\n",
				ev.Input, ev.Output, ev.CacheRead, ev.CacheWrite,
				money(ev.CostUSD, ev.CostUnknown), money(ev.Cumulative.CostUSD, ev.Cumulative.CostUnknown))
		case *wire.TurnEndEvent:
			if ev.Stop == wire.StopAborted {
				failed = true
				note("prompt: aborted\n")
			}
		case *wire.ErrorEvent:
			failed = true
			if ev.Code != "" {
				note("error: %s (%s)\n", ev.Message, ev.Code)
			} else {
				note("error: %s\n", ev.Message)
			}
		}
	}
	return failed
}

// money is a cost in dollars, "unknown" for a model without known prices
// (never $0, which would read as free), and a known part "+ unknown" for
// a total that includes such calls.
func money(usd float64, unknown *bool) string {
	switch {
	case unknown == nil || !*unknown:
		return fmt.Sprintf("$%.6f", usd)
	case usd > 0:
		return fmt.Sprintf("$%.6f + unknown", usd)
	}
	return "unknown"
}
