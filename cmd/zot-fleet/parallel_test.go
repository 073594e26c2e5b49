package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
	ztools "zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// frameClient is zot-fleet client run as zot runs it: frames on its
// stdin and stdout.
type frameClient struct {
	t   *testing.T
	in  *json.Encoder
	out *bufio.Scanner
}

func startFrameClient(t *testing.T, f *fleetSetup) *frameClient {
	t.Helper()
	cmd := exec.Command(f.tl.fleet, "client", "--temporal", f.addr(), "--blobs", f.blobs)
	cmd.Env = append(os.Environ(), "ZOT_HOME="+f.home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
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
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("zot-fleet client said:\n%s", stderr.String())
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	c := &frameClient{t: t, in: json.NewEncoder(in), out: sc}
	if fr := c.next(); fr.Type != fleet.FrameReady {
		t.Fatalf("the client's first frame: %+v, want ready", fr)
	}
	return c
}

// next reads the next frame; a hang fails the test.
func (c *frameClient) next() fleet.Frame {
	c.t.Helper()
	got := make(chan bool, 1)
	go func() { got <- c.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			c.t.Fatalf("the client's output ended: %v", c.out.Err())
		}
	case <-time.After(hang):
		c.t.Fatal("timed out waiting for a frame")
	}
	var fr fleet.Frame
	if err := json.Unmarshal(c.out.Bytes(), &fr); err != nil {
		c.t.Fatalf("%s: %v", c.out.Bytes(), err)
	}
	return fr
}

func (c *frameClient) send(fr fleet.Frame) {
	c.t.Helper()
	if err := c.in.Encode(fr); err != nil {
		c.t.Fatal(err)
	}
}

// TestFleetCallsSideBySide: the calls of one step whose tool may run side
// by side run at once on the fleet, as in process: the session's
// interceptors see them in order before either starts, then both run
// together (each waits to see the other start), their events reach the
// client as they come, none lost though a later call's events pass before
// an earlier one's, and the results are kept in the calls' order. It
// speaks zot's frames to zot-fleet client, offering bash as a tool that
// may run side by side (zot offers so the tools that report it).
func TestFleetCallsSideBySide(t *testing.T) {
	wait := func(name string) string {
		return "for i in $(seq 100); do [ -e " + name + " ] && break; sleep 0.1; done; "
	}
	// a waits for b to start, then outlives b's first output by a second;
	// b says it runs at once, then waits for a.
	cmdA := "touch a.started; " + wait("b.started") + "[ -e b.started ] && echo A-saw-B || echo A-alone; sleep 1; echo A-done"
	cmdB := "echo B-running; touch b.started; " + wait("a.started") + "[ -e a.started ] && echo B-saw-A || echo B-alone"
	argsA, _ := json.Marshal(map[string]string{"command": cmdA})
	argsB, _ := json.Marshal(map[string]string{"command": cmdB})
	f := newFleet(t, func(r modelRequest) []answerPart {
		if r.Results == 0 {
			return []answerPart{{Tool: "bash", Args: string(argsA)}, {Tool: "bash", Args: string(argsB)}}
		}
		return []answerPart{{Text: "Both ran."}}
	})
	f.worker("w1")
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	c := startFrameClient(t, f)

	user, err := sessionfile.EncodeMessage(llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "run both"}}})
	if err != nil {
		t.Fatal(err)
	}
	var bash llm.ToolSpec
	for _, tool := range ztools.Builtins(ztools.Config{CWD: work}) {
		if tool.Name() == "bash" {
			bash = llm.ToolSpec{Name: tool.Name(), Description: tool.Description(), Schema: tool.Schema()}
		}
	}
	turn := &fleet.Turn{
		ID: "zot-side-by-side-1", CWD: work, Provider: "anthropic", Model: "claude-sonnet-4-5",
		Offer:      fleet.Offer{System: "You run commands.", Tools: []llm.ToolSpec{bash}, Concurrent: []string{"bash"}},
		Transcript: []json.RawMessage{user}, MaxSteps: 10,
	}
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: turn.ID, Input: turn})

	var asked []string // the commands' first words, as the interceptors saw them, and what had started then
	var events []wire.Event
	var res *fleet.TurnResult
	for res == nil {
		fr := c.next()
		switch fr.Type {
		case fleet.FrameIntercept:
			var a struct{ Command string }
			_ = json.Unmarshal(fr.Call.Args, &a)
			_, errA := os.Stat(filepath.Join(work, "a.started"))
			_, errB := os.Stat(filepath.Join(work, "b.started"))
			asked = append(asked, strings.Fields(a.Command)[1]+" started:"+map[bool]string{true: "none", false: "some"}[os.IsNotExist(errA) && os.IsNotExist(errB)])
			c.send(fleet.Frame{Type: fleet.FrameVerdict, Turn: fr.Turn, Request: fr.Request, Verdict: &fleet.ToolVerdict{}})
		case fleet.FrameEvent:
			ev, err := wire.DecodeEvent(fr.Event)
			if err != nil {
				t.Fatalf("%s: %v", fr.Event, err)
			}
			events = append(events, ev)
		case fleet.FrameDone:
			res = fr.Result
		case fleet.FrameError:
			t.Fatalf("the turn failed: %s", fr.Error)
		}
	}

	if want := []string{"a.started; started:none", "B-running; started:none"}; !slices.Equal(asked, want) {
		t.Errorf("the interceptors saw %q, want both calls in order before either started: %q", asked, want)
	}
	// Each call's events: its tool_call, maybe progress, its one result.
	var ids []string
	output := map[string]string{}
	results := map[string]int{}
	var order []string
	for _, ev := range events {
		switch e := ev.(type) {
		case *wire.ToolCallEvent:
			ids = append(ids, e.ID)
		case *wire.ToolProgressEvent:
			order = append(order, e.ID)
		case *wire.ToolResultEvent:
			results[e.ID]++
			order = append(order, "result "+e.ID)
			for _, blk := range e.Content {
				if tb, ok := blk.(*wire.TextBlock); ok {
					output[e.ID] += tb.Text
				}
			}
		}
	}
	if len(ids) != 2 {
		t.Fatalf("tool_call events for %q, want two calls; events: %v", ids, events)
	}
	a, b := ids[0], ids[1]
	if results[a] != 1 || results[b] != 1 {
		t.Errorf("results: %v, want one for each call", results)
	}
	if !strings.Contains(output[a], "A-saw-B") || !strings.Contains(output[a], "A-done") || !strings.Contains(output[b], "B-saw-A") {
		t.Errorf("the calls did not run side by side: a said %q, b %q", output[a], output[b])
	}
	// b's events passed before a's result (a outlived b by a second), and
	// the relay still passed a's.
	if i, j := slices.IndexFunc(order, func(s string) bool { return strings.HasSuffix(s, b) }), slices.Index(order, "result "+a); i < 0 || j < 0 || i > j {
		t.Errorf("events of the calls in order %q: want b's before a's result (they ran at once)", order)
	}
	// The transcript keeps the results in the calls' order.
	last, err := sessionfile.DecodeMessage(res.Transcript[len(res.Transcript)-1])
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, m := range res.Transcript {
		msg, err := sessionfile.DecodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Role != llm.RoleTool {
			continue
		}
		for _, blk := range msg.Content {
			if r, ok := blk.(*llm.ToolResultBlock); ok {
				kept = append(kept, r.CallID)
			}
		}
	}
	if !slices.Equal(kept, []string{a, b}) {
		t.Errorf("the transcript keeps results of %q, want %q", kept, []string{a, b})
	}
	if last.Role != llm.RoleAssistant {
		t.Errorf("the turn ended with a %s message, want the answer", last.Role)
	}
	if n0, n1 := f.model.count(0), f.model.count(2); n0 != 1 || n1 != 1 {
		t.Errorf("model requests: %d first and %d second, want one each", n0, n1)
	}
}
