package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"zot.dev/zot/cmd/zot-fleet/durable"
	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/registry"
)

// runWorker serves the turns' workflows and model calls on --task-queue
// and their tool calls on --tool-queue, until ctx ends.
func runWorker(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("zot-fleet worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c cluster
	c.flags(fs)
	provider := fs.String("provider", "scripted", "the provider that makes the model calls")
	script := fs.String("script", "", "the scripted provider's script (a JSON file)")
	baseURL := fs.String("base-url", "", "the provider's endpoint")
	apiKey := fs.String("api-key", "", "the provider's API key (default: its environment variable)")
	identity := fs.String("identity", "", "the worker's name in the cluster (default: host and pid)")
	healthAddr := fs.String("health", "", "HOST:PORT where GET /healthz answers 200 while the worker serves and the cluster answers, else 503 with the reason")
	stopTimeout := fs.Duration("stop-timeout", DefaultStopTimeout, "on SIGTERM or SIGINT, how long the calls running may go on before they are cut (a second signal stops at once)")
	mcp := fs.Bool("mcp", true, "run the MCP servers of the tools the turns call here (a server of the session's configuration, started in the working directory); false leaves those calls to the daemons")
	mcpIdle := fs.Duration("mcp-idle", durable.DefaultMCPIdle, "how long an MCP server no call uses is kept running")
	var sb sandboxFlags
	sb.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("zot-fleet worker takes no arguments, got %q", fs.Arg(0))}
	}
	if *stopTimeout < 0 {
		return usageError{fmt.Sprintf("--stop-timeout %v: want 0 or more", *stopTimeout)}
	}
	floor, err := sb.policy()
	if err != nil {
		return err
	}
	key, err := registry.APIKey(*provider, *apiKey, os.Getenv, "")
	if err != nil {
		return err
	}
	p, err := registry.Build(registry.Spec{Name: *provider, APIKey: key, BaseURL: *baseURL, ScriptPath: *script})
	if err != nil {
		return err
	}
	blobs, err := c.store()
	if err != nil {
		return err
	}
	cl, err := c.dial(stderr)
	if err != nil {
		return err
	}
	defer cl.Close()
	hc, err := serveHealth(*healthAddr, cl, &c, stderr)
	if err != nil {
		return err
	}
	defer hc.close()
	// The activities post events to the relays of the clients: keep a
	// connection to each for every activity that may post at once (the
	// default client keeps two, and opens and closes one per post beyond).
	relays := http.DefaultTransport.(*http.Transport).Clone()
	relays.MaxIdleConnsPerHost = 256
	acts := &durable.Activities{Provider: p, ProviderName: *provider, Blobs: blobs, Floor: floor, HTTP: &http.Client{Transport: relays}}
	if *mcp {
		acts.MCP = &durable.MCPServers{Log: stderr, Idle: *mcpIdle, ClientVersion: buildinfo.Version()}
		defer acts.MCP.Close()
	}
	opts := worker.Options{
		Identity:          *identity,
		WorkerStopTimeout: *stopTimeout,
		// A running activity's heartbeat, recorded each second, reaches
		// the cluster each second, and with its answer an abort: the SDK
		// would hold them back to 80% of the heartbeat timeout (8 s).
		MaxHeartbeatThrottleInterval: time.Second,
	}
	main := worker.New(cl, c.queue, opts)
	main.RegisterWorkflowWithOptions(durable.Turn, workflow.RegisterOptions{Name: durable.WorkflowName})
	main.RegisterActivityWithOptions(acts.Step, activity.RegisterOptions{Name: durable.StepActivity})
	main.RegisterActivityWithOptions(acts.Answer, activity.RegisterOptions{Name: durable.AnswerActivity})
	main.RegisterActivityWithOptions(acts.Ask, activity.RegisterOptions{Name: durable.AskActivity})
	workers := []worker.Worker{main}
	if c.tools() == c.queue {
		main.RegisterActivityWithOptions(acts.Tool, activity.RegisterOptions{Name: durable.ToolActivity})
	} else {
		tw := worker.New(cl, c.tools(), opts)
		tw.RegisterActivityWithOptions(acts.Tool, activity.RegisterOptions{Name: durable.ToolActivity})
		workers = append(workers, tw)
	}
	for i, w := range workers {
		if err := w.Start(); err != nil {
			for _, started := range workers[:i] {
				started.Stop()
			}
			return fmt.Errorf("starting the worker: %w", c.explain(err))
		}
	}
	hc.set("serving")
	fmt.Fprintf(stderr, "zot-fleet worker: serving %s (tools on %s) at %s, namespace %s; %s\n", c.queue, c.tools(), c.hostPort, c.namespace, describeFloor(floor))
	<-ctx.Done()
	hc.set("stopping")
	fmt.Fprintf(stderr, "zot-fleet worker: stopping: taking no more calls; those running have %v to finish (a second signal stops at once)\n", *stopTimeout)
	stopAll(workers)
	fmt.Fprintln(stderr, "zot-fleet worker: stopped")
	return nil
}

// DefaultStopTimeout is how long a stopping worker lets the calls it
// runs finish: the 30 s a Kubernetes pod has between SIGTERM and
// SIGKILL by default.
const DefaultStopTimeout = 30 * time.Second

// stopAll stops the workers at once, each letting its running calls
// finish within the stop timeout, and returns when all have stopped.
func stopAll(workers []worker.Worker) {
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Stop()
		}()
	}
	wg.Wait()
}
