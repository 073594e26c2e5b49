package durable

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// countingModel answers every call with the same text and counts the
// calls it is paid for.
type countingModel struct{ calls atomic.Int32 }

func (m *countingModel) Name() string { return "anthropic" }

func (m *countingModel) Stream(_ context.Context, _ *llm.Request, _ llm.Sink) (*llm.Response, error) {
	m.calls.Add(1)
	return &llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "done"}}},
		Stop:    llm.StopEndTurn,
		Usage:   llm.Usage{Input: 10, Output: 2},
	}, nil
}

// TestCallFinishedBeforeTheClusterHeard: a model call or a tool call whose
// worker finished it but went away before the cluster heard is asked for
// again (another attempt, the same input). The attempt returns what the
// first recorded: the model is not paid twice, the command does not run
// twice (docs/fleet.md, what is durable).
func TestCallFinishedBeforeTheClusterHeard(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	blobs := fleet.Dir(filepath.Join(dir, "blobs"))
	model := &countingModel{}
	acts := &Activities{Provider: model, ProviderName: "anthropic", Blobs: blobs}
	var s testsuite.WorkflowTestSuite

	user, err := sessionfile.EncodeMessage(llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	transcript, err := blobs.Put(ctx, append(user, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	turn := TurnInfo{ID: "turn-1", CWD: dir, Model: "claude-sonnet-4-5"}
	step := StepInput{Turn: turn, Transcript: transcript, Step: 1, MaxSteps: 10, Seq: 1 << seqShift}
	var outs [2]StepOutput
	for i := range outs {
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(acts.Step)
		v, err := env.ExecuteActivity(acts.Step, step)
		if err != nil {
			t.Fatalf("step, attempt %d: %v", i+1, err)
		}
		if err := v.Get(&outs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := model.calls.Load(); n != 1 {
		t.Errorf("the model was paid %d times for one call asked twice, want once", n)
	}
	if outs[0].Transcript == "" || outs[1].Transcript != outs[0].Transcript || outs[1].Meter != outs[0].Meter {
		t.Errorf("the second attempt returned %+v, want the first's %+v", outs[1], outs[0])
	}

	args, _ := json.Marshal(map[string]string{"command": "echo ran >> count.txt"})
	tool := ToolInput{Turn: turn, Call: Call{ID: "c1", Name: "bash", Args: args}, Seq: 2 << seqShift}
	var results [2]ToolOutput
	for i := range results {
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(acts.Tool)
		v, err := env.ExecuteActivity(acts.Tool, tool)
		if err != nil {
			t.Fatalf("tool, attempt %d: %v", i+1, err)
		}
		if err := v.Get(&results[i]); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "count.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "ran"); n != 1 {
		t.Errorf("the command ran %d times for one call asked twice, want once", n)
	}
	if results[0].Result == "" || results[1] != results[0] {
		t.Errorf("the second attempt returned %+v, want the first's %+v", results[1], results[0])
	}
}
