package durable

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedTurns replays the histories of turns that workers
// of an earlier build ran (testdata/histories, written by the fleet's
// tests with ZOT_FLEET_HISTORIES set) against this build's Turn, as a
// worker of this build replays a turn that was running when the fleet's
// workers were replaced: a change of Turn that asks for other commands
// than those histories recorded would fail every turn in flight during
// a deploy. Such a change takes workflow.GetVersion, keeping the old
// course for the turns that began on it; the histories here stay.
func TestReplayRecordedTurns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/histories")
	}
	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflowWithOptions(Turn, workflow.RegisterOptions{Name: WorkflowName})
			if err := replayer.ReplayWorkflowHistoryFromJSONFile(quiet, file); err != nil {
				t.Errorf("%s does not replay on this build's Turn: %v", file, err)
			}
		})
	}
}
