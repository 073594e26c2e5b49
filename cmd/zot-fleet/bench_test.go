package main

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// BenchmarkFleet measures the fleet on this machine's loopback (make
// bench-fleet; the metrics are the result, b.N is not used): the median
// turn of one session (a model call, a bash call, a model call) through
// zot daemon in process and through the fleet, and what the fleet adds
// per call; then 100 sessions, each a client of its own, prompting at
// once, with one worker, with two, and in process: turns per second; and
// the history a turn leaves in the cluster.
func BenchmarkFleet(b *testing.B) {
	// The server hands a worker the activity its workflow task schedules
	// in the answer to that task (eager execution), as a production
	// cluster may be configured to.
	f := newFleet(b, toolThenAnswer("true", 0), "--dynamic-config-value", "system.enableActivityEagerExecution=true")
	f.worker("w1")
	_, inSock := f.daemon("inprocess", true)
	_, fleetSock := f.daemon("fleet", false)
	const turns = 20
	latency := func(sock string) time.Duration {
		c := dialACP(b, sock)
		s := c.newSession(f.dir)
		c.prompt(s, "go") // the first turn warms the caches
		var d []time.Duration
		for i := 0; i < turns; i++ {
			start := time.Now()
			c.prompt(s, "go")
			d = append(d, time.Since(start))
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
	b.ReportMetric(scale(fleetSock), "turns/s-1-worker")
	f.worker("w2")
	b.ReportMetric(scale(fleetSock), "turns/s-2-workers")
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
		h := cl.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, 0)
		for h.HasNext() {
			ev, err := h.Next()
			if err != nil {
				b.Fatal(err)
			}
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
