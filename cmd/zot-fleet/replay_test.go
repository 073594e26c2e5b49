package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"zot.dev/zot/cmd/zot-fleet/durable"
)

// replayAll replays the history of every run of a turn's workflow the
// dev server holds against this build's durable.Turn, as a worker
// replays a turn it did not hold in its cache (another worker ran it, or
// it was evicted): a turn whose code asks for other commands than its
// history recorded (not deterministic: a clock, a map's order, a
// goroutine of its own) fails the test. Every fleet test runs it as its
// dev server stops, so each turn the tests run (killed workers, aborts,
// continue-as-new, children, calls side by side) is replayed once. With
// ZOT_FLEET_HISTORIES set, each history is also written there, as
// durable's testdata keeps them (durable.TestReplayRecordedTurns).
func (f *fleetSetup) replayAll() {
	t := f.t
	if f.replayed {
		return
	}
	f.replayed = true
	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	cl, err := client.Dial(client.Options{HostPort: f.addr(), Logger: quiet})
	if err != nil {
		if !t.Failed() { // a test that failed already may have left no server
			t.Errorf("replaying the turns: %v", err)
		}
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(durable.Turn, workflow.RegisterOptions{Name: durable.WorkflowName})
	keep := os.Getenv("ZOT_FLEET_HISTORIES")
	var token []byte
	for {
		resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: "default", Query: "WorkflowType = '" + durable.WorkflowName + "'", NextPageToken: token,
		})
		if err != nil {
			t.Errorf("replaying the turns: listing them: %v", err)
			return
		}
		for _, ex := range resp.GetExecutions() {
			id, run := ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId()
			hist := &historypb.History{}
			it := cl.GetWorkflowHistory(ctx, id, run, false, 0)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					t.Errorf("replaying turn %s: its history: %v", id, err)
					return
				}
				hist.Events = append(hist.Events, ev)
			}
			if err := replayer.ReplayWorkflowHistory(quiet, hist); err != nil {
				t.Errorf("turn %s (run %s) does not replay on this build's workflow: %v", id, run, err)
			}
			if keep != "" {
				data, err := protojson.Marshal(hist)
				if err == nil {
					err = os.WriteFile(filepath.Join(keep, t.Name()+"-"+run+".json"), data, 0o644)
				}
				if err != nil {
					t.Errorf("keeping the history of %s: %v", id, err)
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return
		}
	}
}
