// Command zot-fleet runs zot's turns on a Temporal cluster: zot-fleet
// worker runs the turns' workflows and activities (model calls with its
// provider, tool calls in the working directories it holds), and
// zot-fleet client is what zot daemon --executor temporal starts to
// submit its sessions' turns and relay their events back (frames of
// zot.dev/zot/internal/fleet on stdin and stdout). It is a binary of its
// own so that zot rpc and the rest of zot do not link the Temporal SDK
// (gRPC and protobuf). See docs/fleet.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"zot.dev/zot/internal/fleet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, which stops the work gracefully, a second
	// one ends the process at once.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(os.Stderr, "zot-fleet:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "zot-fleet:", err)
		os.Exit(1)
	}
}

// usageError is a command line that does not parse.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

const usage = `usage: zot-fleet worker [flags]   run turns' workflows and activities
       zot-fleet client [flags]   submit turns for zot daemon --executor temporal (frames on stdin/stdout)
Run zot-fleet worker -h or zot-fleet client -h for the flags; see docs/fleet.md.`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return usageError{"a subcommand is needed: worker or client"}
	}
	switch args[0] {
	case "worker":
		return runWorker(ctx, args[1:], stderr)
	case "client":
		return runClient(ctx, args[1:], stdin, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return usageError{fmt.Sprintf("unknown subcommand %q: want worker or client", args[0])}
}

// cluster holds the flags that say which Temporal cluster and queue.
type cluster struct {
	hostPort, namespace, queue, toolQueue, blobs string
	tlsCert, tlsKey, tlsCA, tlsServer            string
}

func (c *cluster) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.hostPort, "temporal", fleet.DefaultTemporal, "the Temporal frontend, HOST:PORT")
	fs.StringVar(&c.namespace, "namespace", fleet.DefaultNamespace, "the Temporal namespace")
	fs.StringVar(&c.queue, "task-queue", fleet.DefaultTaskQueue, "the task queue of the turns' workflows and model calls")
	fs.StringVar(&c.toolQueue, "tool-queue", "", "the task queue of tool calls: the workers holding the sessions' working directories (default: --task-queue)")
	fs.StringVar(&c.blobs, "blobs", "", "the blob store directory every worker and client of the fleet shares (default: $ZOT_HOME/fleet/blobs)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "client certificate (PEM) for mTLS to the cluster")
	fs.StringVar(&c.tlsKey, "tls-key", "", "the client certificate's key (PEM)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA bundle (PEM) the cluster's certificate is checked against (default: the system's)")
	fs.StringVar(&c.tlsServer, "tls-server-name", "", "the server name the cluster's certificate must carry")
}

// logger keeps the SDK's log to warnings and errors on stderr.
func logger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
