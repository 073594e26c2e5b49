package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/fleet"
)

// fleetFlags are zot daemon's flags of the executor that runs its
// sessions' turns on a Temporal fleet (docs/fleet.md).
func fleetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "executor", Value: "in-process", Local: true,
			Usage: "where the sessions' turns run: in-process, or temporal (durable turns on a fleet of zot-fleet workers; docs/fleet.md)"},
		&cli.StringFlag{Name: "temporal", Value: fleet.DefaultTemporal, Local: true, Usage: "--executor temporal: the Temporal frontend, HOST:PORT"},
		&cli.StringFlag{Name: "namespace", Value: fleet.DefaultNamespace, Local: true, Usage: "--executor temporal: the Temporal namespace"},
		&cli.StringFlag{Name: "task-queue", Value: fleet.DefaultTaskQueue, Local: true, Usage: "--executor temporal: the task queue of the turns' workflows and model calls"},
		&cli.StringFlag{Name: "tool-queue", Local: true, Usage: "--executor temporal: the task queue of the workers holding the sessions' working directories (default: --task-queue)"},
		&cli.StringFlag{Name: "blobs", Local: true, Usage: "--executor temporal: the blob store directory the fleet shares (default: <zot home>/fleet/blobs)"},
		&cli.StringFlag{Name: "temporal-tls-cert", Local: true, Usage: "--executor temporal: client certificate (PEM) for mTLS to the cluster"},
		&cli.StringFlag{Name: "temporal-tls-key", Local: true, Usage: "--executor temporal: the client certificate's key (PEM)"},
		&cli.StringFlag{Name: "temporal-tls-ca", Local: true, Usage: "--executor temporal: CA bundle (PEM) the cluster's certificate is checked against"},
		&cli.StringFlag{Name: "temporal-tls-server-name", Local: true, Usage: "--executor temporal: the server name the cluster's certificate must carry"},
		&cli.StringFlag{Name: "temporal-relay", Local: true, Usage: "--executor temporal: HOST:PORT where the daemon takes the turns' events and questions from the workers (default: 127.0.0.1 on a free port, only for workers on this machine)"},
		&cli.StringFlag{Name: "temporal-relay-url", Local: true, Usage: "--executor temporal: the URL the workers reach --temporal-relay at (default: http://HOST:PORT of --temporal-relay; needed when it listens on every address)"},
		&cli.DurationFlag{Name: "temporal-tool-start-timeout", Local: true, Usage: "--executor temporal: how long a tool call waits for a worker of the tool queue to take it before it is answered as not run (default 1m)"},
		&cli.IntFlag{Name: "temporal-history-events", Local: true, Usage: "--executor temporal: a turn's workflow continues as new between two steps once a run's history holds this many events, or when the cluster suggests it (default 10000; 0: only then)"},
	}
}

// fleetFlagNames are the names fleetFlags defines.
var fleetFlagNames = []string{"executor", "temporal", "namespace", "task-queue", "tool-queue", "blobs",
	"temporal-tls-cert", "temporal-tls-key", "temporal-tls-ca", "temporal-tls-server-name", "temporal-relay", "temporal-relay-url", "temporal-tool-start-timeout", "temporal-history-events"}

// fleetBinary is the program beside zot that links the Temporal SDK.
const fleetBinary = fleet.Binary

// besideZot returns the path of zot-fleet beside the running zot, or an
// error that says how to get it.
func besideZot() (string, error) {
	path, err := besideSelf(fleetBinary)
	if err != nil {
		return "", fmt.Errorf("%w: the Temporal executor and worker are in a binary of their own; make build-fleet (or make install-fleet) builds it beside zot", err)
	}
	return path, nil
}

// startFleet starts zot-fleet client for --executor temporal and waits
// until it has reached the cluster; nil, nil with the in-process
// executor.
func startFleet(ctx context.Context, cmd *cli.Command, log io.Writer) (*fleet.Remote, error) {
	switch cmd.String("executor") {
	case "", "in-process":
		for _, n := range fleetFlagNames[1:] {
			if cmd.IsSet(n) {
				return nil, usagef("--%s applies to --executor temporal", n)
			}
		}
		return nil, nil
	case "temporal":
	default:
		return nil, usagef("--executor %q: want in-process or temporal", cmd.String("executor"))
	}
	path, err := besideZot()
	if err != nil {
		return nil, &exitError{code: 1, msg: "zot: --executor temporal: " + err.Error()}
	}
	history := 0
	if cmd.IsSet("temporal-history-events") {
		if history = int(cmd.Int("temporal-history-events")); history < 0 {
			return nil, usagef("--temporal-history-events %d: want 0 or more", history)
		}
		if history == 0 {
			history = -1 // the cluster's suggestion only
		}
	}
	if relay := cmd.String("temporal-relay"); relay != "" && cmd.String("temporal-relay-url") == "" {
		if host, _, err := net.SplitHostPort(relay); err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
			return nil, usagef("--temporal-relay %s listens on every address, which workers cannot post to: give --temporal-relay-url, the URL they reach it at (http://HOST:PORT)", relay)
		}
	}
	h, err := zotHome(log)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	r, err := fleet.Connect(ctx, engine.FleetConfig{
		Binary:           path,
		Temporal:         cmd.String("temporal"),
		Namespace:        cmd.String("namespace"),
		TaskQueue:        cmd.String("task-queue"),
		ToolQueue:        cmd.String("tool-queue"),
		Blobs:            cmd.String("blobs"),
		TLSCert:          cmd.String("temporal-tls-cert"),
		TLSKey:           cmd.String("temporal-tls-key"),
		TLSCA:            cmd.String("temporal-tls-ca"),
		TLSServerName:    cmd.String("temporal-tls-server-name"),
		Relay:            cmd.String("temporal-relay"),
		RelayURL:         cmd.String("temporal-relay-url"),
		HistoryEvents:    history,
		ToolStartTimeout: cmd.Duration("temporal-tool-start-timeout"),
		Turns:            filepath.Join(h.Dir, "fleet", "turns"),
		Log:              log,
	})
	if err != nil {
		return nil, &exitError{code: 1, msg: "zot: --executor temporal: " + err.Error()}
	}
	return r, nil
}

// workerCommand runs zot-fleet worker, from beside zot, with the same
// arguments.
func workerCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "worker",
		HideHelpCommand: true,
		Usage:           "run turns of zot daemon --executor temporal on a Temporal fleet (zot-fleet worker; docs/fleet.md)",
		SkipFlagParsing: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			path, err := besideZot()
			if err != nil {
				return &exitError{code: 1, msg: "zot worker: " + err.Error()}
			}
			return execFleet(path, append([]string{fleetBinary, "worker"}, cmd.Args().Slice()...))
		},
	}
}
