package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"zot.dev/zot/cmd/zot-fleet/durable"
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
	var sb sandboxFlags
	sb.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("zot-fleet worker takes no arguments, got %q", fs.Arg(0))}
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
	acts := &durable.Activities{Provider: p, ProviderName: *provider, Blobs: blobs, Floor: floor}
	opts := worker.Options{Identity: *identity}
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
			return fmt.Errorf("starting the worker: %w", err)
		}
	}
	fmt.Fprintf(stderr, "zot-fleet worker: serving %s (tools on %s) at %s, namespace %s; %s\n", c.queue, c.tools(), c.hostPort, c.namespace, describeFloor(floor))
	<-ctx.Done()
	for _, w := range workers {
		w.Stop()
	}
	return nil
}
