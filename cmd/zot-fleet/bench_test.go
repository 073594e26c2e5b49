package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// everyTurn is a model that calls bash with cmd when prompted and, given
// its result, answers: every turn is a model call, a tool call and a
// model call.
func everyTurn(cmd string) func(modelRequest) []answerPart {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return func(r modelRequest) []answerPart {
		if !r.Answering {
			return []answerPart{{Text: "Running it now. "}, {Tool: "bash", Args: string(args)}}
		}
		return []answerPart{{Text: "Done: the command ran and said what it said."}}
	}
}

// benchServer are the dev server's flags in the benchmarks, as a
// production cluster may be configured for latency: the server hands a
// worker the activity its workflow task schedules in the answer to that
// task (eager execution), and hands on a workflow task as soon as it is
// written.
var benchServer = []string{
	"--dynamic-config-value", "system.enableActivityEagerExecution=true",
	// The history service reads the tasks it hands on (a workflow task
	// after an activity's end) at most this often a second per shard
	// (default 20: up to 50 ms before each workflow task; the dev server
	// has one shard).
	"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
}

// BenchmarkFleet measures the fleet on this machine's loopback (make
// bench-fleet; the metrics are the result, b.N is not used): the median
// turn of one session (a model call, a bash call, a model call) through
// zot daemon in process and through the fleet, and what the fleet adds
// per call; then 100 sessions, each a client of its own, prompting at
// once: turns per second with one worker, two, one again and two again
// (the mean of each: the machine's load drifts between runs), and in
// process; and the history a turn leaves in the cluster.
func BenchmarkFleet(b *testing.B) {
	f := newFleet(b, everyTurn("true"), benchServer...)
	f.worker("w1")
	_, inSock := f.daemon("inprocess", true)
	_, fleetSock := f.daemon("fleet", false)
	const turns = 20
	latency := func(sock string) time.Duration {
		before := f.model.answering()
		c := dialACP(b, sock)
		s := c.newSession(f.dir)
		c.prompt(s, "go") // the first turn warms the caches
		var d []time.Duration
		for i := 0; i < turns; i++ {
			start := time.Now()
			c.prompt(s, "go")
			d = append(d, time.Since(start))
		}
		if n := f.model.answering() - before; n != turns+1 {
			b.Fatalf("the model was given tool results %d times in %d turns, want a tool call in every turn", n, turns+1)
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	in, fl := latency(inSock), latency(fleetSock)
	b.ReportMetric(float64(in.Microseconds())/1000, "ms/turn-in-process")
	b.ReportMetric(float64(fl.Microseconds())/1000, "ms/turn-fleet")
	b.ReportMetric(float64((fl-in).Microseconds())/3000, "ms-added/call")

	scale := func(sock string) float64 {
		const sessions = 100
		cs := make([]*acpClient, sessions)
		ss := make([]string, sessions)
		for i := range cs {
			cs[i] = dialACP(b, sock)
			ss[i] = cs[i].newSession(f.dir)
		}
		errs := make([]error, sessions)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = cs[i].try("session/prompt", map[string]any{"sessionId": ss[i], "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
			}()
		}
		wg.Wait()
		took := time.Since(start)
		for i, err := range errs {
			if err != nil {
				b.Fatalf("session %d: %v", i, err)
			}
		}
		return sessions / took.Seconds()
	}
	var one, two float64
	for range 2 {
		one += scale(fleetSock) / 2
		w2 := f.worker("w2")
		two += scale(fleetSock) / 2
		w2.stop()
	}
	b.ReportMetric(one, "turns/s-1-worker")
	b.ReportMetric(two, "turns/s-2-workers")
	b.ReportMetric(scale(inSock), "turns/s-in-process")

	events, size := history(b, f)
	b.ReportMetric(events, "history-events/turn")
	b.ReportMetric(size, "history-bytes/turn")
}

// history returns the mean events and bytes of the histories of (up to
// 100 of) the turns' workflows.
func history(b *testing.B, f *fleetSetup) (events, size float64) {
	cl, err := client.Dial(client.Options{HostPort: f.addr()})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 100})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range resp.Executions {
		for _, ev := range events1(ctx, b, cl, e.Execution.WorkflowId, e.Execution.RunId) {
			events++
			size += float64(proto.Size(ev))
		}
		if n++; n == 100 {
			break
		}
	}
	if n == 0 {
		return 0, 0
	}
	return events / float64(n), size / float64(n)
}

// events1 returns the history of one workflow run.
func events1(ctx context.Context, b *testing.B, cl client.Client, id, run string) []*historypb.HistoryEvent {
	var out []*historypb.HistoryEvent
	h := cl.GetWorkflowHistory(ctx, id, run, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for h.HasNext() {
		ev, err := h.Next()
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// BenchmarkFleetTimeline shows where the time of one session's turn (a
// model call, a bash call, a model call) goes: medians of 20 turns of
// the time from the prompt to the workflow's start, in workflow tasks
// (scheduled to completed), in activities (scheduled to completed, the
// worker's part included) and from the last activity's end to the
// prompt's answer; it prints the last turn's history, each event at its
// time after the prompt.
func BenchmarkFleetTimeline(b *testing.B) {
	f := newFleet(b, everyTurn("true"), benchServer...)
	f.worker("w1")
	_, sock := f.daemon("fleet", false)
	c := dialACP(b, sock)
	s := c.newSession(f.dir)
	c.prompt(s, "go")
	cl, err := client.Dial(client.Options{HostPort: f.addr()})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	var starts, tasks, acts, ends, totals []float64
	var last []string
	for range 20 {
		start := time.Now()
		c.prompt(s, "go")
		took := time.Since(start)
		resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1})
		if err != nil || len(resp.Executions) == 0 {
			b.Fatalf("listing the turns: %v", err)
		}
		e := resp.Executions[0].Execution
		evs := events1(ctx, b, cl, e.WorkflowId, e.RunId)
		ms := func(t time.Time) float64 { return float64(t.Sub(start).Microseconds()) / 1000 }
		var task, act, scheduled, lastAct float64
		last = last[:0]
		for _, ev := range evs {
			at := ms(ev.EventTime.AsTime())
			last = append(last, fmt.Sprintf("%7.1f ms  %s", at, ev.EventType))
			switch ev.EventType {
			case enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				scheduled = at
			case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				task += at - scheduled
			case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				act += at - scheduled
				lastAct = at
			}
		}
		starts = append(starts, ms(evs[0].EventTime.AsTime()))
		ends = append(ends, float64(took.Microseconds())/1000-lastAct)
		tasks, acts = append(tasks, task), append(acts, act)
		totals = append(totals, float64(took.Microseconds())/1000)
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(totals), "ms/turn")
	b.ReportMetric(med(starts), "ms/start")
	b.ReportMetric(med(tasks), "ms/workflow-tasks")
	b.ReportMetric(med(acts), "ms/activities")
	b.ReportMetric(med(ends), "ms/end")
	fmt.Printf("the last turn's history:\n%s\n", strings.Join(last, "\n"))
}
