package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"zot.dev/zot/cmd/zot-fleet/durable"
	"zot.dev/zot/internal/fleet"
)

// TestFleetEndFromLastStep: the client answers a turn with the end its
// last step posts to the relay, before the workflow closes; the daemon
// keeps the whole turn from it (the next turn's model call carries the
// first turn's tool call and result), and each workflow closes with the
// same end.
func TestFleetEndFromLastStep(t *testing.T) {
	f := newFleet(t, everyTurn("echo ran >> log.txt"))
	f.worker("w1")
	_, sock := f.daemon("d", false)
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	c := dialACP(t, sock)
	s := c.newSession(work)
	for _, p := range []string{"one", "two"} {
		if res := c.prompt(s, p); !strings.Contains(string(res), `"end_turn"`) {
			t.Fatalf("prompt %s answered %s", p, res)
		}
	}
	// Turn one: a request with no result, then one with its result; turn
	// two: a request with turn one's result, then one with both.
	for results, want := range []int{1, 2, 1} {
		if n := f.model.count(results); n != want {
			t.Errorf("%d model requests carried %d tool results, want %d", n, results, want)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(work, "log.txt")); string(log) != "ran\nran\n" {
		t.Errorf("the command ran %q, want twice", log)
	}

	cl, err := client.Dial(client.Options{HostPort: f.addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Executions) != 2 {
		t.Fatalf("%d workflows, want the two turns'", len(resp.Executions))
	}
	var lengths []int
	for _, e := range resp.Executions {
		var out durable.TurnOutput
		if err := cl.GetWorkflow(ctx, e.Execution.WorkflowId, e.Execution.RunId).Get(ctx, &out); err != nil {
			t.Fatalf("turn %s: %v", e.Execution.WorkflowId, err)
		}
		if out.Code != "" || out.Aborted || len(out.Results) != 0 || out.Steps != 2 {
			t.Errorf("turn %s ended %+v, want two steps and an answer", e.Execution.WorkflowId, out)
		}
		msgs, err := durable.ReadTranscript(ctx, fleet.Dir(f.blobs), out.Transcript)
		if err != nil {
			t.Fatal(err)
		}
		lengths = append(lengths, len(msgs))
	}
	// Each turn: the prompt, the tool call, its result, the answer.
	if slices.Sort(lengths); !slices.Equal(lengths, []int{4, 8}) {
		t.Errorf("the turns' workflows ended with transcripts of %v messages, want 4 and 8", lengths)
	}
}
