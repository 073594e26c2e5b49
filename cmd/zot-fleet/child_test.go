package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"zot.dev/zot/cmd/zot-fleet/durable"
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
	return &fleet.Turn{ID: id, CWD: cwd, Provider: "anthropic", Model: "claude-sonnet-4-5", Offer: fleet.Offer{System: system, Tools: specs},
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

// delegator is a model whose session hands a task to a sub-agent (the
// task tool), whose sub-agent answers child (and runs bash first when
// cmd is set), and which answers once the task's result came. It
// counts the requests of each and keeps the last result the parent was
// given; asked is closed at the sub-agent's first request.
type delegator struct {
	mu          sync.Mutex
	parent, sub int
	lastResult  string
	asked       chan struct{}
	once        sync.Once
	cmd         string
	child       string
	childDelay  time.Duration
}

func newDelegator(cmd, child string, childDelay time.Duration) *delegator {
	return &delegator{asked: make(chan struct{}), cmd: cmd, child: child, childDelay: childDelay}
}

func (d *delegator) answer(r modelRequest) []answerPart {
	d.mu.Lock()
	defer d.mu.Unlock()
	if strings.Contains(r.System, subAgentMark) {
		d.sub++
		d.once.Do(func() { close(d.asked) })
		if d.cmd != "" && r.Results == 0 {
			args, _ := json.Marshal(map[string]string{"command": d.cmd})
			return []answerPart{{Text: "Running it. "}, {Tool: "bash", Args: string(args)}}
		}
		return []answerPart{{Text: d.child, Delay: d.childDelay}}
	}
	d.parent++
	if r.Results == 0 {
		args, _ := json.Marshal(map[string]string{"description": "log it", "prompt": "child: log it"})
		return []answerPart{{Text: "Delegating. "}, {Tool: "task", Args: string(args)}}
	}
	d.lastResult = r.LastResult
	return []answerPart{{Text: "The sub-agent is done."}}
}

func (d *delegator) counts() (parent, sub int, last string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.parent, d.sub, d.lastResult
}

// durationRe matches the time a result record says its prompt took.
var durationRe = regexp.MustCompile(`duration_ms\\*":[0-9]+`)

// untimed is ss without the durations of the result records in them.
func untimed(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = durationRe.ReplaceAllString(s, "duration_ms")
	}
	return out
}

// childMeta is, per update, what the sub-agent's event it carries is
// (its type, and for usage the session's tokens so far): the parts of
// the updates that normUpdates leaves out.
func childMeta(us []json.RawMessage) []string {
	var out []string
	for _, u := range us {
		var m struct {
			Kind string `json:"sessionUpdate"`
			Meta struct {
				Zot struct {
					ChildEvent *struct {
						ParentID string `json:"parentId"`
						Event    struct {
							Type string `json:"type"`
						} `json:"event"`
					} `json:"childEvent"`
					Tokens json.RawMessage `json:"tokens"`
				} `json:"zot"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(u, &m)
		switch {
		case m.Meta.Zot.ChildEvent != nil:
			out = append(out, m.Meta.Zot.ChildEvent.ParentID+" "+m.Meta.Zot.ChildEvent.Event.Type)
		case m.Kind == "usage_update":
			out = append(out, "usage "+string(m.Meta.Zot.Tokens))
		}
	}
	return out
}

// childTurns waits until the cluster lists n turns that are child
// workflows and returns them (child id → parent id).
func childTurns(t *testing.T, cl client.Client, n int) map[string]string {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		resp, err := cl.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = '" + durable.WorkflowName + "'"})
		if err != nil {
			t.Fatal(err)
		}
		kids := map[string]string{}
		for _, e := range resp.GetExecutions() {
			if p := e.GetParentExecution().GetWorkflowId(); p != "" {
				kids[e.GetExecution().GetWorkflowId()] = p
			}
		}
		if len(kids) >= n || time.Now().After(deadline) {
			if len(kids) != n {
				t.Fatalf("the cluster lists %d child turns (%v); want %d", len(kids), kids, n)
			}
			return kids
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// closedWithin waits up to d for workflow id to close and returns its
// status then.
func closedWithin(t *testing.T, cl client.Client, id string, d time.Duration) enumspb.WorkflowExecutionStatus {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		desc, err := cl.DescribeWorkflow(context.Background(), id, "")
		if err != nil {
			t.Fatal(err)
		}
		st := desc.RawResponse.GetWorkflowExecutionInfo().GetStatus()
		if st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || time.Now().After(deadline) {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestFleetSubAgentAsInProcess: a prompt whose model hands a task to a
// sub-agent (the task tool) on the fleet: the client sees the same
// updates as in process (the task call, the sub-agent's events as its
// updates, the task's result, the usage with the sub-agent's counted
// toward the session), the sub-agent's command runs once, and its turn
// is a child workflow of the prompt's turn in the cluster.
func TestFleetSubAgentAsInProcess(t *testing.T) {
	d := newDelegator("echo child >> log.txt", "Logged it.", 0)
	f := newFleet(t, d.answer)
	f.worker("w1")
	run := func(name string, inProcess bool) ([]json.RawMessage, json.RawMessage, string) {
		_, sock := f.daemon(name, inProcess)
		work := filepath.Join(f.dir, name+"-work")
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		c := dialACP(t, sock)
		s := c.newSession(work)
		c.taken()
		res := c.prompt(s, "delegate")
		if !strings.Contains(string(res), `"stopReason":"end_turn"`) {
			t.Fatalf("%s: prompt answered %s", name, res)
		}
		log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
		return c.taken(), res, string(log)
	}
	want, wantRes, wantLog := run("inprocess", true)
	_, _, inResult := d.counts()
	got, gotRes, gotLog := run("fleet", false)
	took := regexp.MustCompile(`duration_ms\\*":([0-9]+)`)
	if w, g := took.FindStringSubmatch(strings.Join(normUpdates(want), "\n")), took.FindStringSubmatch(strings.Join(normUpdates(got), "\n")); w != nil && g != nil {
		t.Logf("the sub-agent's prompt (two model calls, a bash call) took %s ms in process, %s ms on the fleet", w[1], g[1])
	}
	if w, g := untimed(normUpdates(want)), untimed(normUpdates(got)); !slices.Equal(w, g) {
		t.Errorf("updates differ:\nin process:\n%s\nfleet:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
	}
	if w, g := childMeta(want), childMeta(got); !slices.Equal(w, g) || !slices.Contains(g, "toolu_0_1 tool_result") {
		t.Errorf("the sub-agent's events and the usage differ:\nin process:\n%s\nfleet:\n%s", strings.Join(w, "\n"), strings.Join(g, "\n"))
	}
	// Four model calls of 10 input tokens each: the session's two and
	// the sub-agent's two.
	if last := childMeta(got); len(last) == 0 || !strings.HasPrefix(last[len(last)-1], `usage {"cacheRead":0,"cacheWrite":0,"input":40,`) {
		t.Errorf("the session's usage after the turn: %v; want the sub-agent's calls counted", last)
	}
	usage := func(res json.RawMessage) string {
		var r struct {
			Meta struct {
				Zot struct {
					Result struct {
						Usage json.RawMessage `json:"usage"`
					} `json:"result"`
				} `json:"zot"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(res, &r)
		return string(r.Meta.Zot.Result.Usage)
	}
	if w, g := usage(wantRes), usage(gotRes); w != g || g == "" {
		t.Errorf("the prompt's usage: in process %s, fleet %s", w, g)
	}
	if wantLog != "child\n" || gotLog != "child\n" {
		t.Errorf("the sub-agent's command: in process %q, fleet %q; want it once each", wantLog, gotLog)
	}
	if parent, sub, last := d.counts(); parent != 4 || sub != 4 || untimed([]string{last})[0] != untimed([]string{inResult})[0] {
		t.Errorf("model requests: %d of the sessions, %d of the sub-agents; want 4 and 4 (none paid twice); the task's result given to the model: in process %q, fleet %q", parent, sub, inResult, last)
	}
	// Each daemon kept the sub-agent's transcript in a session file of its
	// own, linked to the session's and its task call.
	files, _ := filepath.Glob(filepath.Join(f.home, "sessions", "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(f.home, "sessions", "*.jsonl"))
	kept := 0
	for _, name := range append(files, more...) {
		b, _ := os.ReadFile(name)
		if strings.Contains(string(b), `"parent_call_id":"toolu_0_1"`) && strings.Contains(string(b), "Logged it.") {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("%d session files hold the sub-agent's transcript linked to its task call; want one per daemon (in process, fleet)", kept)
	}
	cl := f.dialCluster(t)
	for child, parent := range childTurns(t, cl, 1) {
		if !childStarted(t, cl, parent, child) {
			t.Errorf("the history of %s records no ChildWorkflowExecutionStarted of %s", parent, child)
		}
	}
}

// TestFleetSubAgentCancelled: session/cancel while a sub-agent's model
// call streams ends the prompt cancelled within seconds, and the
// sub-agent's turn, a child workflow, ends with it: its model call cut.
func TestFleetSubAgentCancelled(t *testing.T) {
	d := newDelegator("", longText+" "+longText+" "+longText, 300*time.Millisecond)
	f := newFleet(t, d.answer)
	f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	wait := promptAsync(t, c, s, "delegate")
	waitChan(t, "the sub-agent's model call", d.asked)
	time.Sleep(time.Second) // its answer streams
	start := time.Now()
	c.notify("session/cancel", map[string]any{"sessionId": s})
	res := wait()
	if !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("the cancelled prompt answered %s", res)
	}
	took := time.Since(start)
	t.Logf("the cancel ended the turn in %v", took)
	if took > 5*time.Second {
		t.Errorf("the cancel took %v to end the turn", took)
	}
	cl := f.dialCluster(t)
	for child := range childTurns(t, cl, 1) {
		// The sub-agent's answer streams for 18 s: a turn closed soon after
		// the cancel had its model call cut.
		if st := closedWithin(t, cl, child, 5*time.Second); st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("the sub-agent's turn %s still runs 5 s after the cancel", child)
		}
	}
	if parent, sub, _ := d.counts(); parent != 1 || sub != 1 {
		t.Errorf("model requests: %d of the session, %d of the sub-agent; want 1 and 1", parent, sub)
	}
}

// TestFleetDaemonKilledMidTask: kill -9 of the daemon while a
// sub-agent's model call streams. The task call, which the daemon ran,
// is answered as interrupted; the sub-agent's turn is cancelled then,
// not left running; the session's turn goes on, and a daemon started
// again shows its end on session/load. No model call is paid twice.
func TestFleetDaemonKilledMidTask(t *testing.T) {
	d := newDelegator("", longText+" "+longText+" "+longText+" "+longText, 300*time.Millisecond)
	f := newFleet(t, d.answer)
	f.worker("w1")
	dm, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	_ = promptAsync(t, c, s, "delegate")
	waitChan(t, "the sub-agent's model call", d.asked)
	killed := time.Now()
	dm.kill()
	_ = os.Remove(sock)
	_, sock = f.daemon("d2", false)
	c2 := dialACP(t, sock)
	c2.call("session/load", map[string]any{"sessionId": s, "cwd": f.dir, "mcpServers": []any{}})
	if got := text(c2.taken()); !strings.HasSuffix(got, "The sub-agent is done.") {
		t.Errorf("session/load after the restart shows %q; want the turn's end", got)
	}
	cl := f.dialCluster(t)
	for child := range childTurns(t, cl, 1) {
		// The sub-agent's answer streams for 24 s; the task call is
		// answered interrupted as soon as the daemon's client is gone.
		if st := closedWithin(t, cl, child, 5*time.Second); st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("the sub-agent's turn %s still runs %v after the daemon was killed", child, time.Since(killed))
		}
		t.Logf("the sub-agent's turn closed within %v of the daemon's kill", time.Since(killed))
	}
	if parent, sub, last := d.counts(); parent != 2 || sub != 1 || !strings.Contains(last, "went away") {
		t.Errorf("model requests: %d of the session, %d of the sub-agent (want 2 and 1); the task's result given to the model: %q (want it interrupted)", parent, sub, last)
	}
}

// TestFleetSubAgentApproval: with --permission ask, a sub-agent's tool
// call on the fleet is shown to the session's approval, which asks the
// client once: allowed, the command runs once; rejected, never.
func TestFleetSubAgentApproval(t *testing.T) {
	d := newDelegator("echo child >> log.txt", "Logged it.", 0)
	f := newFleet(t, d.answer)
	f.worker("w1")
	_, sock := f.daemonAs("d", false, "ask")
	for _, reject := range []bool{false, true} {
		work := filepath.Join(f.dir, fmt.Sprintf("work-%v", reject))
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		c := dialACP(t, sock)
		c.reject = reject
		s := c.newSession(work)
		if res := c.prompt(s, "delegate"); !strings.Contains(string(res), `"end_turn"`) {
			t.Fatalf("reject=%v: prompt answered %s", reject, res)
		}
		log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
		want := "child\n"
		if reject {
			want = ""
		}
		// The task call itself is not asked about: it changes nothing.
		if c.asked != 1 || !strings.Contains(string(c.questions[0]), "echo child") || string(log) != want {
			t.Errorf("reject=%v: asked %d times (%s), the sub-agent's command's effect %q; want asked once, of the command, and %q", reject, c.asked, c.questions, log, want)
		}
	}
}

// TestFleetWorkerKilledMidSubAgent: kill -9 of the worker streaming a
// sub-agent's answer. The sub-agent's model call is made again on the
// other worker (the child's turn goes on, and so does the parent's,
// replayed there), the task's result holds the answer once, and only
// the call that was cut is paid again.
func TestFleetWorkerKilledMidSubAgent(t *testing.T) {
	d := newDelegator("", longText, 100*time.Millisecond)
	f := newFleet(t, d.answer)
	w1 := f.worker("w1")
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	wait := promptAsync(t, c, s, "delegate")
	waitChan(t, "the sub-agent's model call", d.asked)
	f.worker("w2")
	w1.kill()
	if res := wait(); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	parent, sub, last := d.counts()
	if parent != 2 || sub != 2 {
		t.Errorf("model requests: %d of the session (want 2), %d of the sub-agent (want 2: the cut one and its retry)", parent, sub)
	}
	if !strings.Contains(last, longText) || strings.Count(last, "one two") != 1 {
		t.Errorf("the task's result given to the model: %q; want the sub-agent's answer once", last)
	}
}

// TestFleetSubAgentNested: with --agent-depth 2, a sub-agent's own
// sub-agent is a child workflow of the sub-agent's turn: the cluster
// shows the tree of three turns, and the session's usage counts every
// one's model calls.
func TestFleetSubAgentNested(t *testing.T) {
	task := func(prompt string) answerPart {
		args, _ := json.Marshal(map[string]string{"description": "pass it on", "prompt": prompt})
		return answerPart{Tool: "task", Args: string(args)}
	}
	f := newFleet(t, func(r modelRequest) []answerPart {
		switch {
		case strings.HasPrefix(r.Prompt, "grandchild:"):
			return []answerPart{{Text: "Done at the bottom."}}
		case strings.HasPrefix(r.Prompt, "child:") && r.Results == 0:
			return []answerPart{{Text: "Passing it on. "}, task("grandchild: do it")}
		case r.Results == 0:
			return []answerPart{{Text: "Delegating. "}, task("child: pass it on")}
		}
		return []answerPart{{Text: "Done."}}
	})
	f.worker("w1")
	_, sock := f.daemonAs("d", false, "allow", "--agent-depth", "2")
	c := dialACP(t, sock)
	s := c.newSession(f.dir)
	c.taken()
	if res := c.prompt(s, "delegate"); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	// Five model calls of 10 input tokens: two of the session, two of
	// its sub-agent, one of the sub-agent's sub-agent.
	if meta := childMeta(c.taken()); len(meta) == 0 || !strings.HasPrefix(meta[len(meta)-1], `usage {"cacheRead":0,"cacheWrite":0,"input":50,`) {
		t.Errorf("the session's usage after the turn: %v; want every sub-agent's calls counted", meta)
	}
	cl := f.dialCluster(t)
	kids := childTurns(t, cl, 2)
	var top, middle, bottom string
	for child, parent := range kids {
		if _, ok := kids[parent]; ok {
			bottom, middle = child, parent
		}
	}
	top = kids[middle]
	if bottom == "" || top == "" {
		t.Fatalf("the child turns %v form no chain of three", kids)
	}
	if !childStarted(t, cl, top, middle) || !childStarted(t, cl, middle, bottom) {
		t.Errorf("the histories of %s and %s do not record the starts of %s and %s", top, middle, middle, bottom)
	}
}

// TestFleetSubAgentsSideBySide: two task calls of one step start their
// sub-agents together on the fleet, as in process: each sub-agent's
// command sees the other's start, and both turns are child workflows of
// the prompt's.
func TestFleetSubAgentsSideBySide(t *testing.T) {
	wait := func(me, other string) string {
		return "touch " + me + ".started; for i in $(seq 100); do [ -e " + other + ".started ] && break; sleep 0.1; done; " +
			"if [ -e " + other + ".started ]; then echo together > " + me + ".txt; else echo alone > " + me + ".txt; fi"
	}
	task := func(prompt string) answerPart {
		args, _ := json.Marshal(map[string]string{"description": prompt, "prompt": prompt})
		return answerPart{Tool: "task", Args: string(args)}
	}
	bash := func(cmd string) answerPart {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return answerPart{Tool: "bash", Args: string(args)}
	}
	f := newFleet(t, func(r modelRequest) []answerPart {
		switch {
		case r.Prompt == "child: a" && r.Results == 0:
			return []answerPart{bash(wait("a", "b"))}
		case r.Prompt == "child: b" && r.Results == 0:
			return []answerPart{bash(wait("b", "a"))}
		case strings.HasPrefix(r.Prompt, "child:"):
			return []answerPart{{Text: "Done."}}
		case r.Results == 0:
			return []answerPart{{Text: "Two at once. "}, task("child: a"), task("child: b")}
		}
		return []answerPart{{Text: "Both done."}}
	})
	f.worker("w1")
	_, sock := f.daemon("d", false)
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	c := dialACP(t, sock)
	s := c.newSession(work)
	if res := c.prompt(s, "delegate"); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	a, _ := os.ReadFile(filepath.Join(work, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(work, "b.txt"))
	if string(a) != "together\n" || string(b) != "together\n" {
		t.Errorf("the sub-agents' commands said %q and %q; want each to see the other start (side by side)", a, b)
	}
	kids := childTurns(t, f.dialCluster(t), 2)
	var parents []string
	for _, p := range kids {
		parents = append(parents, p)
	}
	if parents[0] != parents[1] {
		t.Errorf("the sub-agents' turns have parents %v; want the prompt's turn for both", parents)
	}
}
