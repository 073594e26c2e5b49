package durable

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/sdk/wire"
)

// TestTurnRunsCallsSideBySideAsInProcess runs the turn's workflow in
// Temporal's test environment with a step that asks for four calls: a and
// b may run side by side, c may not, d may but has no neighbour that
// may. The interceptors see a and b in order (one Ask) before either
// starts; a and b run at once (each waits to see the other start); c
// starts once both ended, d once c ended, alone, asking for itself; the
// next step gets the results in the calls' order.
func TestTurnRunsCallsSideBySideAsInProcess(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Turn, workflow.RegisterOptions{Name: WorkflowName})

	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	var next []string // the results the second step was given
	env.RegisterActivityWithOptions(func(_ context.Context, in StepInput) (StepOutput, error) {
		if in.Step == 1 {
			return StepOutput{Action: agent.ActionRunTools, Transcript: "t1", Calls: []Call{
				{ID: "a", Name: "read", Concurrent: true},
				{ID: "b", Name: "read", Concurrent: true},
				{ID: "c", Name: "bash"},
				{ID: "d", Name: "read", Concurrent: true},
			}}, nil
		}
		next = in.Results
		return StepOutput{Action: agent.ActionEnd, Transcript: "t2"}, nil
	}, activity.RegisterOptions{Name: StepActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in AskInput) (AskOutput, error) {
		var ids []string
		for _, c := range in.Calls {
			ids = append(ids, c.ID)
		}
		note("ask " + strings.Join(ids, ","))
		return AskOutput{Verdicts: make([]fleet.ToolVerdict, len(in.Calls))}, nil
	}, activity.RegisterOptions{Name: AskActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in ToolInput) (ToolOutput, error) {
		id := in.Call.ID
		asked := "self"
		if in.Verdict != nil {
			asked = "asked"
		}
		note("start " + id + " " + asked)
		if ch, ok := started[id]; ok {
			close(ch)
			other := map[string]string{"a": "b", "b": "a"}[id]
			select {
			case <-started[other]:
			case <-time.After(5 * time.Second):
				note(id + " ran alone")
			}
		}
		note("end " + id)
		return ToolOutput{Result: "result-" + id}, nil
	}, activity.RegisterOptions{Name: ToolActivity})

	env.ExecuteWorkflow(WorkflowName, TurnInput{
		Turn:       TurnInfo{ID: "turn", Intercept: "http://daemon/intercept", ToolQueue: "zot"},
		Transcript: "t0", MaxSteps: 10,
	})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("the turn did not complete: %v", env.GetWorkflowError())
	}
	if want := []string{"result-a", "result-b", "result-c", "result-d"}; !slices.Equal(next, want) {
		t.Errorf("the next step got %q, want %q", next, want)
	}
	at := func(s string) int { return slices.Index(log, s) }
	for _, s := range []string{"ask a,b", "start a asked", "start b asked", "end a", "end b", "start c self", "end c", "start d self", "end d"} {
		if at(s) < 0 {
			t.Fatalf("%q never happened: %q", s, log)
		}
	}
	if at("ask a,b") > at("start a asked") || at("start b asked") > at("end a") || at("start a asked") > at("end b") ||
		at("start c self") < max(at("end a"), at("end b")) || at("start d self") < at("end c") || slices.ContainsFunc(log, func(s string) bool { return strings.HasSuffix(s, "alone") }) {
		t.Errorf("the calls ran in the order %q; want a and b asked, then run at once, then c, then d", log)
	}
}

// TestTurnEndsWhenACallCannotBeAnswered: a call whose activity failed is
// answered by the Answer activity; when that fails too (the blob store
// is gone), the call has no result, and the turn ends with an internal
// error saying so instead of making the next model call without it (a
// transcript with a tool call and no result, which a provider refuses).
func TestTurnEndsWhenACallCannotBeAnswered(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Turn, workflow.RegisterOptions{Name: WorkflowName})
	steps := 0
	env.RegisterActivityWithOptions(func(_ context.Context, in StepInput) (StepOutput, error) {
		steps++
		if in.Step == 1 {
			return StepOutput{Action: agent.ActionRunTools, Transcript: "t1", Calls: []Call{{ID: "c", Name: "bash"}}}, nil
		}
		return StepOutput{Action: agent.ActionEnd, Transcript: "t2"}, nil
	}, activity.RegisterOptions{Name: StepActivity})
	env.RegisterActivityWithOptions(func(context.Context, ToolInput) (ToolOutput, error) {
		return ToolOutput{}, temporal.NewNonRetryableApplicationError("the worker's disk is gone", "test", nil)
	}, activity.RegisterOptions{Name: ToolActivity})
	env.RegisterActivityWithOptions(func(context.Context, AnswerInput) (AnswerOutput, error) {
		return AnswerOutput{}, temporal.NewNonRetryableApplicationError("the blob store is gone", "test", nil)
	}, activity.RegisterOptions{Name: AnswerActivity})

	env.ExecuteWorkflow(WorkflowName, TurnInput{Turn: TurnInfo{ID: "turn", ToolQueue: "zot"}, Transcript: "t0", MaxSteps: 10})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("the turn did not complete: %v", env.GetWorkflowError())
	}
	var out TurnOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if steps != 1 {
		t.Errorf("%d model calls; want the turn to end after the first, whose call has no result", steps)
	}
	if out.Code != string(wire.CodeInternal) || !strings.Contains(out.Message, "the blob store is gone") {
		t.Errorf("the turn ended with code %q, %q; want internal, saying why the call has no result", out.Code, out.Message)
	}
}
