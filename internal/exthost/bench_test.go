package exthost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/extwire"
)

// reportMedian times each iteration of f and reports the median and the
// 90th percentile, which the mean ns/op of a round trip through another
// process hides.
func reportMedian(b *testing.B, f func()) {
	b.Helper()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		f()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds()), "p90-µs")
}

// benchHost starts the Go test extension on a fake session and waits for
// it.
func benchHost(b *testing.B) (*fakeSession, *Manager) {
	b.Helper()
	sess := newFakeSession(b)
	cfg, _, _ := testConfig(b, goExt(b, b.TempDir(), "gx"))
	h := start(b, sess, cfg)
	h.WaitReady(context.Background())
	if e := h.byName("gx"); e == nil || e.info().State != "ready" {
		b.Fatalf("the Go extension is not ready: %+v", h.Extensions())
	}
	return sess, h
}

// BenchmarkInterceptToolCall is one tool_call intercept through a Go
// extension: event_intercept out, event_intercept_response back, as the
// agent's chain asks it before each tool call.
func BenchmarkInterceptToolCall(b *testing.B) {
	_, h := benchHost(b)
	icpt := h.byName("gx").interceptor()
	call := agent.ToolCall{ID: "toolu_01", Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)}
	ctx := context.Background()
	reportMedian(b, func() {
		if v := icpt.BeforeTool(ctx, call); v.Err != nil || v.Block {
			b.Fatalf("verdict %+v", v)
		}
	})
}

// BenchmarkToolCall compares a tool of a Go extension with the built-in
// read of a small file, both run through the session's tool set as the
// agent runs them. Each iteration runs one of each, alternately, so that
// the load of the machine weighs on both alike; it reports both medians
// and their ratio.
func BenchmarkToolCall(b *testing.B) {
	sess, _ := benchHost(b)
	ctx := context.Background()
	path := filepath.Join(sess.CWD(), "main.go")
	if err := os.WriteFile(path, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ext, _ := sess.Tools().View().Lookup("gx_echo")
	read, _ := sess.Tools().View().Lookup("read")
	extCall := tools.Call{ID: "toolu_01", Args: json.RawMessage(`{"text":"package main\n\nfunc main() {}\n"}`)}
	readCall := tools.Call{ID: "toolu_02", Args: json.RawMessage(`{"path":"main.go"}`)}
	run := func(t tools.Tool, c tools.Call) time.Duration {
		start := time.Now()
		if res, err := t.Run(ctx, c); err != nil || res.IsError {
			b.Fatalf("%s: %+v %v", t.Name(), res, err)
		}
		return time.Since(start)
	}
	extTimes := make([]time.Duration, 0, b.N)
	readTimes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		extTimes = append(extTimes, run(ext, extCall))
		readTimes = append(readTimes, run(read, readCall))
	}
	b.StopTimer()
	slices.Sort(extTimes)
	slices.Sort(readTimes)
	e, r := extTimes[len(extTimes)/2], readTimes[len(readTimes)/2]
	b.ReportMetric(float64(e.Microseconds()), "ext-median-µs")
	b.ReportMetric(float64(r.Microseconds()), "read-median-µs")
	b.ReportMetric(float64(e)/float64(r), "ext/read")
}

// A check that the benchmark's extension answers what it is asked, so a
// broken one cannot pass for a fast one.
func TestBenchExtensionAnswers(t *testing.T) {
	sess := newFakeSession(t)
	cfg, _, _ := testConfig(t, goExt(t, t.TempDir(), "gx"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	r := runTool(t, sess, "gx_echo", `{"text":"x"}`)
	if text(r) != "echo: x" {
		t.Fatalf("result %q", text(r))
	}
	if !h.byName("gx").intercepts[extwire.InterceptEventToolCall] {
		t.Fatal("the Go extension does not intercept tool calls")
	}
}

// BenchmarkDecodeToolResult compares the tool_result scanner with
// the generated decoder.
func BenchmarkDecodeToolResult(b *testing.B) {
	line := []byte(`{"type":"tool_result","id":"123","content":[{"type":"text","text":"echo: package main\n\nfunc main() {}\n"}]}`)
	b.Run("scan", func(b *testing.B) {
		for range b.N {
			if _, err := decodeFrame(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated", func(b *testing.B) {
		for range b.N {
			if _, err := extwire.DecodeExtensionFrame(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}
