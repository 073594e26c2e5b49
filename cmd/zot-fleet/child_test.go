package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
	ztools "zot.dev/zot/internal/tools"
)

// subAgentMark is what a sub-agent's system prompt says (engine.newChild).
const subAgentMark = "You are a sub-agent"

// frameLog is zot-fleet client (with more flags) driven as zot daemon
// drives it (frames on its stdin and stdout), keeping each turn's frames.
type frameLog struct {
	t  *testing.T
	in *json.Encoder
	mu sync.Mutex
	// frames holds, per turn, the frames that came for it.
	frames map[string][]fleet.Frame
	got    chan fleet.Frame
}

func (f *fleetSetup) frameLog(t *testing.T, flags ...string) *frameLog {
	t.Helper()
	cmd := exec.Command(f.tl.fleet, append([]string{"client", "--temporal", f.addr(), "--blobs", f.blobs}, flags...)...)
	cmd.Env = append(os.Environ(), "ZOT_HOME="+f.home)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &frameLog{t: t, in: json.NewEncoder(in), frames: map[string][]fleet.Frame{}, got: make(chan fleet.Frame, 4096)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			var fr fleet.Frame
			if json.Unmarshal(sc.Bytes(), &fr) != nil {
				continue
			}
			c.mu.Lock()
			c.frames[fr.Turn] = append(c.frames[fr.Turn], fr)
			c.mu.Unlock()
			c.got <- fr
		}
	}()
	t.Cleanup(func() {
		_ = in.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("zot-fleet client said:\n%s", stderr.String())
		}
	})
	if fr := c.next(func(fr fleet.Frame) bool { return fr.Type == fleet.FrameReady || fr.Type == fleet.FrameError }); fr.Type != fleet.FrameReady {
		t.Fatalf("the client: %s", fr.Error)
	}
	return c
}

func (c *frameLog) send(fr fleet.Frame) {
	c.t.Helper()
	if err := c.in.Encode(fr); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next frame that match accepts.
func (c *frameLog) next(match func(fleet.Frame) bool) fleet.Frame {
	c.t.Helper()
	deadline := time.After(hang)
	for {
		select {
		case fr := <-c.got:
			if match(fr) {
				return fr
			}
		case <-deadline:
			c.t.Fatal("timed out waiting for a frame")
		}
	}
}

// events returns the event frames of turn id.
func (c *frameLog) events(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, fr := range c.frames[id] {
		if fr.Type == fleet.FrameEvent {
			out = append(out, string(fr.Event))
		}
	}
	return out
}

// frameTurn is a turn of a prompt as zot daemon describes it, offering
// zot's built-in tools.
func frameTurn(t *testing.T, id, cwd, system, prompt string) *fleet.Turn {
	t.Helper()
	line, err := sessionfile.EncodeMessage(llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: prompt}}})
	if err != nil {
		t.Fatal(err)
	}
	var specs []llm.ToolSpec
	for _, tl := range ztools.Builtins(ztools.Config{CWD: cwd}) {
		specs = append(specs, llm.ToolSpec{Name: tl.Name(), Description: tl.Description(), Schema: tl.Schema()})
	}
	return &fleet.Turn{ID: id, CWD: cwd, Provider: "anthropic", Model: "claude-sonnet-4-5", System: system, Tools: specs,
		Transcript: []json.RawMessage{line}, MaxSteps: 10}
}

// dialCluster is a client of the test's dev server.
func (f *fleetSetup) dialCluster(t *testing.T) client.Client {
	t.Helper()
	cl, err := client.Dial(client.Options{HostPort: f.addr(), Logger: logger(&syncBuffer{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// childStarted says whether the history of workflow parent records the
// start of child as its child workflow.
func childStarted(t *testing.T, cl client.Client, parent, child string) bool {
	t.Helper()
	it := cl.GetWorkflowHistory(context.Background(), parent, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil && a.GetWorkflowExecution().GetWorkflowId() == child {
			return true
		}
	}
	return false
}

// TestFleetChildTurnFrames: zot-fleet client starts a sub-agent's turn
// (a submit naming its parent turn and task call) as a child workflow of
// the parent's, from the parent's workflow, while the call runs; the
// child's events come under its own turn, its end as any turn's, and its
// usage counts toward the parent's turn once the call has ended.
func TestFleetChildTurnFrames(t *testing.T) {
	f := newFleet(t, func(r modelRequest) []answerPart {
		switch {
		case strings.Contains(r.System, subAgentMark):
			return []answerPart{{Text: "the child's answer"}}
		case r.Results == 0:
			return []answerPart{{Text: "Delegating. "}, {Tool: "bash", Args: `{"command":"echo parent >> log.txt"}`}}
		}
		return []answerPart{{Text: "The parent is done."}}
	})
	f.worker("w1")
	c := f.frameLog(t)
	work := t.TempDir()
	parent := frameTurn(t, "zot-test-parent", work, "the parent", "delegate")
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: parent.ID, Input: parent})
	// The worker shows the parent's call to the daemon before it runs it:
	// while it waits, the call runs, as a task call runs its sub-agent.
	ask := c.next(func(fr fleet.Frame) bool { return fr.Type == fleet.FrameIntercept && fr.Turn == parent.ID })
	child := frameTurn(t, "zot-test-child", work, subAgentMark+".", "child: answer")
	child.Parent, child.ParentCall = parent.ID, ask.Call.ID
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: child.ID, Input: child})
	end := c.next(func(fr fleet.Frame) bool {
		return fr.Turn == child.ID && (fr.Type == fleet.FrameDone || fr.Type == fleet.FrameError)
	})
	if end.Type != fleet.FrameDone || end.Result.Code != "" || end.Result.Aborted {
		t.Fatalf("the child's turn ended %+v %+v", end, end.Result)
	}
	childUsage := end.Result.Meter.Usage
	if evs := strings.Join(c.events(child.ID), "\n"); !strings.Contains(evs, `"turn_end"`) || !strings.Contains(evs, "the child's answer") {
		t.Errorf("the child's events:\n%s", evs)
	}
	c.send(fleet.Frame{Type: fleet.FrameVerdict, Turn: parent.ID, Request: ask.Request, Verdict: &fleet.ToolVerdict{}})
	pend := c.next(func(fr fleet.Frame) bool {
		return fr.Turn == parent.ID && (fr.Type == fleet.FrameDone || fr.Type == fleet.FrameError)
	})
	if pend.Type != fleet.FrameDone || pend.Result.Code != "" {
		t.Fatalf("the parent's turn ended %+v", pend)
	}
	// Two model calls of the parent, one of the child's.
	if got, one := pend.Result.Meter.Usage, childUsage; one.Input == 0 || got.Input != 3*one.Input || got.Output != 3*one.Output {
		t.Errorf("the parent's usage %+v; want its two calls' and the child's %+v", got, one)
	}
	if log, _ := os.ReadFile(filepath.Join(work, "log.txt")); string(log) != "parent\n" {
		t.Errorf("the parent's command ran %q", log)
	}
	cl := f.dialCluster(t)
	d, err := cl.DescribeWorkflow(context.Background(), child.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if p := d.RawResponse.GetWorkflowExecutionInfo().GetParentExecution().GetWorkflowId(); p != parent.ID {
		t.Errorf("the child's workflow has parent %q; want %q", p, parent.ID)
	}
	if !childStarted(t, cl, parent.ID, child.ID) {
		t.Errorf("the parent's history records no ChildWorkflowExecutionStarted of %s", child.ID)
	}
}

// TestFleetChildTurnAbortedWithItsParent: an abort of a turn reaches the
// sub-agent's turn its task call started: the child workflow is
// cancelled, its model call cut, and it ends aborted.
func TestFleetChildTurnAbortedWithItsParent(t *testing.T) {
	f := newFleet(t, func(r modelRequest) []answerPart {
		if strings.Contains(r.System, subAgentMark) {
			return []answerPart{{Text: longText + " " + longText, Delay: 300 * time.Millisecond}}
		}
		return []answerPart{{Text: "Delegating. "}, {Tool: "bash", Args: `{"command":"true"}`}}
	})
	f.worker("w1")
	c := f.frameLog(t)
	work := t.TempDir()
	parent := frameTurn(t, "zot-test-parent", work, "the parent", "delegate")
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: parent.ID, Input: parent})
	ask := c.next(func(fr fleet.Frame) bool { return fr.Type == fleet.FrameIntercept && fr.Turn == parent.ID })
	child := frameTurn(t, "zot-test-child", work, subAgentMark+".", "child: count")
	child.Parent, child.ParentCall = parent.ID, ask.Call.ID
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: child.ID, Input: child})
	c.next(func(fr fleet.Frame) bool {
		return fr.Turn == child.ID && fr.Type == fleet.FrameEvent && strings.Contains(string(fr.Event), `"text_delta"`)
	})
	aborted := time.Now()
	c.send(fleet.Frame{Type: fleet.FrameAbort, Turn: parent.ID})
	end := c.next(func(fr fleet.Frame) bool {
		return fr.Turn == child.ID && (fr.Type == fleet.FrameDone || fr.Type == fleet.FrameError)
	})
	took := time.Since(aborted)
	if end.Type != fleet.FrameDone || !end.Result.Aborted {
		t.Fatalf("the child's turn ended %+v %+v; want aborted", end, end.Result)
	}
	if evs := c.events(child.ID); len(evs) == 0 || !strings.Contains(evs[len(evs)-1], `"aborted"`) {
		t.Errorf("the child's last event: %v; want turn_end aborted", evs)
	}
	if took > 6*time.Second {
		t.Errorf("the child ended %v after the parent's abort; want within seconds", took)
	}
	pend := c.next(func(fr fleet.Frame) bool {
		return fr.Turn == parent.ID && (fr.Type == fleet.FrameDone || fr.Type == fleet.FrameError)
	})
	if pend.Type != fleet.FrameDone || !pend.Result.Aborted {
		t.Errorf("the parent's turn ended %+v; want aborted", pend)
	}
	d, err := f.dialCluster(t).DescribeWorkflow(context.Background(), child.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if p := d.RawResponse.GetWorkflowExecutionInfo().GetParentExecution().GetWorkflowId(); p != parent.ID {
		t.Errorf("the child's workflow has parent %q; want %q", p, parent.ID)
	}
}
