package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/fleet"
)

// manySteps is a model that runs bash steps times, one call a step
// (each appending its number to log.txt), then answers; with slow, the
// last answer streams slowly, its first word "Slowly".
func manySteps(steps int, slow time.Duration) func(modelRequest) []answerPart {
	return func(r modelRequest) []answerPart {
		if r.Results < steps {
			args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %d >> log.txt", r.Results+1)})
			return []answerPart{{Text: fmt.Sprintf("Step %d. ", r.Results+1)}, {Tool: "bash", Args: string(args)}}
		}
		return []answerPart{{Text: "Slowly the steps are all done, one after another, and here is the end.", Delay: slow}}
	}
}

// closedRuns is runs once no workflow's last run is running: a prompt
// is answered with the end its last step posts, a moment before its
// workflow closes.
func (f *fleetSetup) closedRuns() map[string][]string {
	f.t.Helper()
	for deadline := time.Now().Add(hang); ; time.Sleep(100 * time.Millisecond) {
		all := f.runs()
		open := false
		for _, runs := range all {
			open = open || runs[len(runs)-1] == "WORKFLOW_EXECUTION_STATUS_RUNNING"
		}
		if !open || time.Now().After(deadline) {
			return all
		}
	}
}

// runs returns the statuses of the runs of the workflows on the dev
// server, oldest first, by workflow id.
func (f *fleetSetup) runs() map[string][]string {
	f.t.Helper()
	out, err := exec.Command(f.tl.temporal, "workflow", "list", "--address", f.addr(), "--output", "json").Output()
	if err != nil {
		f.t.Fatalf("temporal workflow list: %v", err)
	}
	type execution struct {
		Execution struct {
			WorkflowID string `json:"workflowId"`
		} `json:"execution"`
		StartTime time.Time `json:"startTime"`
		Status    string    `json:"status"`
	}
	var list []execution
	if err := json.Unmarshal(out, &list); err != nil {
		f.t.Fatalf("temporal workflow list: %v\n%s", err, out)
	}
	slices.SortFunc(list, func(a, b execution) int { return a.StartTime.Compare(b.StartTime) })
	runs := map[string][]string{}
	for _, r := range list {
		runs[r.Execution.WorkflowID] = append(runs[r.Execution.WorkflowID], r.Status)
	}
	return runs
}

// TestFleetContinueAsNew: with a low bound on a run's history, a turn
// of eight steps continues as new several times; the client sees the
// same updates in the same order as in process, each command runs once,
// each model call is paid once.
func TestFleetContinueAsNew(t *testing.T) {
	const steps = 8
	f := newFleet(t, manySteps(steps, 0))
	f.worker("w1")
	run := func(name string, inProcess bool) ([]json.RawMessage, string) {
		var flags []string
		if !inProcess {
			flags = []string{"--temporal-history-events", "20"}
		}
		_, sock := f.daemonAs(name, inProcess, "allow", flags...)
		work := filepath.Join(f.dir, name+"-work")
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		c := dialACP(t, sock)
		s := c.newSession(work)
		c.taken()
		if res := c.prompt(s, "go"); !strings.Contains(string(res), `"stopReason":"end_turn"`) {
			t.Fatalf("%s: prompt answered %s", name, res)
		}
		log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
		return c.taken(), string(log)
	}
	want, wantLog := run("inprocess", true)
	got, gotLog := run("fleet", false)
	if w, g := normUpdates(want), normUpdates(got); !slices.Equal(w, g) {
		t.Errorf("updates differ:\nin process:\n%s\nfleet:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
	}
	var log strings.Builder
	for i := 1; i <= steps; i++ {
		fmt.Fprintf(&log, "%d\n", i)
	}
	if wantLog != log.String() || gotLog != log.String() {
		t.Errorf("the commands' effects: in process %q, fleet %q; want each once, in order", wantLog, gotLog)
	}
	for i := 0; i <= steps; i++ {
		if n := f.model.count(i); n != 2 {
			t.Errorf("model call %d was paid %d times for two turns, want 2", i+1, n)
		}
	}
	all := f.closedRuns()
	if len(all) != 1 {
		t.Fatalf("workflows: %v, want the one turn's", all)
	}
	for id, runs := range all {
		t.Logf("turn %s: %d runs", id, len(runs))
		continued := slices.Index(runs, "WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW") >= 0
		if len(runs) < 3 || !continued || runs[len(runs)-1] != "WORKFLOW_EXECUTION_STATUS_COMPLETED" {
			t.Errorf("turn %s ran as %v; want it continued as new at least twice, then completed", id, runs)
		}
	}
}

// TestFleetContinueAsNewAbort: session/cancel of a turn in a later run
// of its workflow (after it continued as new) reaches the run going on:
// the turn ends cancelled within seconds, its answer cut.
func TestFleetContinueAsNewAbort(t *testing.T) {
	f := newFleet(t, manySteps(4, 300*time.Millisecond))
	f.worker("w1")
	_, sock := f.daemonAs("d", false, "allow", "--temporal-history-events", "20")
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	slow := make(chan struct{})
	var once sync.Once
	c.mu.Lock()
	c.onUpdate = func(u json.RawMessage) {
		if strings.Contains(string(u), `"Slowly `) {
			once.Do(func() { close(slow) })
		}
	}
	c.mu.Unlock()
	wait := promptAsync(t, c, s, "go")
	waitChan(t, "the last step's answer", slow)
	var runs []string
	for _, r := range f.runs() {
		runs = r
	}
	if len(runs) < 2 || runs[len(runs)-1] != "WORKFLOW_EXECUTION_STATUS_RUNNING" {
		t.Fatalf("the turn's runs before the cancel: %v; want it continued as new and running", runs)
	}
	began := time.Now()
	c.notify("session/cancel", map[string]any{"sessionId": s})
	res := wait()
	if !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("the cancelled prompt answered %s", res)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the cancel took %v to end the turn", took)
	}
	if got := text(c.taken()); strings.Contains(got, "here is the end") {
		t.Errorf("the answer went on after the cancel: %q", got)
	}
	for id, runs := range f.closedRuns() {
		if runs[len(runs)-1] != "WORKFLOW_EXECUTION_STATUS_COMPLETED" {
			t.Errorf("turn %s ran as %v; want its last run completed", id, runs)
		}
	}
}

// TestFleetChildTurnContinuesAsNew: with a low bound on a run's history,
// a turn and the sub-agent's turn its third task call starts both
// continue as new; the parent waits for the child's last run, and the
// usage of all eight model calls (four each) reaches the parent's end.
func TestFleetChildTurnContinuesAsNew(t *testing.T) {
	f := newFleet(t, func(r modelRequest) []answerPart {
		who := "parent"
		if strings.Contains(r.System, subAgentMark) {
			who = "child"
		}
		if r.Results < 3 {
			args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %s%d >> log.txt", who, r.Results+1)})
			return []answerPart{{Tool: "bash", Args: string(args)}}
		}
		return []answerPart{{Text: "the " + who + " is done"}}
	})
	f.worker("w1")
	c := f.frameLog(t, "--history-events", "15")
	work := t.TempDir()
	parent := frameTurn(t, "zot-test-parent", work, "the parent", "delegate")
	child := frameTurn(t, "zot-test-child", work, subAgentMark+".", "child: work")
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: parent.ID, Input: parent})
	ended := func(id string) func(fleet.Frame) bool {
		return func(fr fleet.Frame) bool {
			return fr.Turn == id && (fr.Type == fleet.FrameIntercept || fr.Type == fleet.FrameDone || fr.Type == fleet.FrameError)
		}
	}
	allow := func(fr fleet.Frame) {
		c.send(fleet.Frame{Type: fleet.FrameVerdict, Turn: fr.Turn, Request: fr.Request, Verdict: &fleet.ToolVerdict{}})
	}
	var childEnd fleet.Frame
	calls := 0
	pend := c.next(ended(parent.ID))
	for ; pend.Type == fleet.FrameIntercept; pend = c.next(ended(parent.ID)) {
		if calls++; calls == 3 {
			// The third call runs while the sub-agent works.
			child.Parent, child.ParentCall = parent.ID, pend.Call.ID
			c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: child.ID, Input: child})
			childEnd = c.next(ended(child.ID))
			for ; childEnd.Type == fleet.FrameIntercept; childEnd = c.next(ended(child.ID)) {
				allow(childEnd)
			}
		}
		allow(pend)
	}
	if childEnd.Type != fleet.FrameDone || childEnd.Result.Code != "" {
		t.Fatalf("the child's turn ended %+v", childEnd)
	}
	if pend.Type != fleet.FrameDone || pend.Result.Code != "" {
		t.Fatalf("the parent's turn ended %+v", pend)
	}
	if got, four := pend.Result.Meter.Usage, childEnd.Result.Meter.Usage; four.Input == 0 || got.Input != 2*four.Input || got.Output != 2*four.Output {
		t.Errorf("the parent's usage %+v; want its four calls' and the child's four %+v", got, four)
	}
	if log, _ := os.ReadFile(filepath.Join(work, "log.txt")); string(log) != "parent1\nparent2\nchild1\nchild2\nchild3\nparent3\n" {
		t.Errorf("the commands ran %q", log)
	}
	runs := f.closedRuns()
	for _, id := range []string{parent.ID, child.ID} {
		if r := runs[id]; len(r) < 2 || r[len(r)-1] != "WORKFLOW_EXECUTION_STATUS_COMPLETED" {
			t.Errorf("turn %s ran as %v; want it continued as new, then completed", id, r)
		}
	}
}
