package main

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFleetDaemonTool measures a call of a tool that lives in the
// daemon (a client's, over ACP): the median turn (a model call, the
// call, a model call) in process and through the fleet, beside the same
// turn with a bash call on the worker, and what the daemon's path adds
// to a call over a worker's (make bench-fleet; b.N is not used).
func BenchmarkFleetDaemonTool(b *testing.B) {
	var call atomic.Value // the call the model makes: a tool and its arguments
	f := newFleet(b, func(r modelRequest) []answerPart {
		if r.Answering {
			return []answerPart{{Text: "Done."}}
		}
		return []answerPart{call.Load().(answerPart)}
	}, benchServer...)
	f.worker("w1")
	_, inSock := f.daemon("inprocess", true)
	_, fleetSock := f.daemon("fleet", false)
	const turns = 20
	latency := func(sock, tool string) time.Duration {
		args := `{"key":"k"}`
		if tool == "bash" {
			args = `{"command":"true"}`
		}
		call.Store(answerPart{Tool: tool, Args: args})
		c := dialACPWith(b, sock, map[string]any{}, func(method string, _ json.RawMessage) (any, bool) {
			return map[string]any{"text": "v"}, method == "_zot/tool/call"
		})
		s := c.newSession(f.dir)
		registerLookup(c, s)
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
	in := latency(inSock, "lookup")
	daemon := latency(fleetSock, "lookup")
	worker := latency(fleetSock, "bash")
	b.ReportMetric(float64(in.Microseconds())/1000, "ms/turn-in-process")
	b.ReportMetric(float64(daemon.Microseconds())/1000, "ms/turn-fleet-daemon-tool")
	b.ReportMetric(float64(worker.Microseconds())/1000, "ms/turn-fleet-worker-tool")
	b.ReportMetric(float64((daemon-worker).Microseconds())/1000, "ms-daemon-over-worker/call")
}
