// Command zot-floor is the floor zot's benchmarks compare against: a
// minimal relay from a model provider's SSE stream to the NDJSON wire of
// `zot rpc`.
//
// It takes the same flags as `zot rpc` that matter to a benchmark
// (--provider anthropic|openai, --model, --base-url, --api-key, an optional
// leading "rpc") and serves the subset of the protocol a benchmark uses:
// ping, and prompt, which streams text_delta events, runs bash tool calls
// with `sh -c` and read tool calls with a plain file read, and ends with
// done. Like any agent it keeps the
// conversation, so each request carries the earlier prompts and answers;
// it does nothing a real runtime does beyond that, so it measures what the
// pipes, the HTTP client and JSON cost on their own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args and serves stdin until it ends; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "rpc" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("zot-floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "anthropic", "provider wire format: anthropic or openai")
	model := fs.String("model", "zot-bench-fake", "model name sent to the provider")
	baseURL := fs.String("base-url", "", "provider base URL (anthropic: host root; openai: API root with /v1)")
	apiKey := fs.String("api-key", "", "API key sent to the provider")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var d dialect
	switch *provider {
	case "anthropic":
		d = anthropic{}
	case "openai":
		d = openai{}
	default:
		fmt.Fprintf(stderr, "zot-floor: unknown provider %q (want anthropic or openai)\n", *provider)
		return 2
	}
	if *baseURL == "" {
		fmt.Fprintln(stderr, "zot-floor: --base-url is required")
		return 2
	}
	r := newRelay(stdout, d, endpoint{model: *model, baseURL: *baseURL, apiKey: *apiKey})
	if err := r.serve(ctx, stdin); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "zot-floor: %v\n", err)
		return 1
	}
	return 0
}
