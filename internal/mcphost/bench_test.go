package mcphost

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
)

// BenchmarkToolCall times a call of an MCP tool over stdio (the Go test
// server's echo, which answers with the text it is given) against the
// built-in read of a small file and against the same call made straight
// through the MCP client's Session on the same connection (what zot's
// tool adds to the client), alternating in one loop so the machine's load weighs on
// all alike.
func BenchmarkToolCall(b *testing.B) {
	dir := b.TempDir()
	content := "package main\n\nfunc main() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	set, err := agent.NewToolSet(tools.Builtins(tools.Config{CWD: dir, Spills: tools.NewSpills("")}), nil)
	if err != nil {
		b.Fatal(err)
	}
	sess := &fakeSession{set: set, cwd: dir}
	m := New(sess, Config{})
	defer m.Close()
	if err := m.AddServers(context.Background(), []Server{{Name: "t", Command: serverBin}}); err != nil {
		b.Fatal(err)
	}
	m.WaitReady(context.Background())
	ctx := context.Background()
	mcpTool, ok := set.View().Lookup("mcp__t__echo")
	if !ok {
		b.Fatalf("no MCP tool: %s", set.View().Names())
	}
	read, _ := set.View().Lookup("read")
	arg, _ := json.Marshal(map[string]string{"text": content})
	mcpCall := tools.Call{ID: "toolu_01", Args: arg}
	readCall := tools.Call{ID: "toolu_02", Args: json.RawMessage(`{"path":"main.go"}`)}
	run := func(t tools.Tool, c tools.Call) time.Duration {
		start := time.Now()
		if res, err := t.Run(ctx, c); err != nil || res.IsError {
			b.Fatalf("%s: %+v %v", t.Name(), res, err)
		}
		return time.Since(start)
	}
	cs := m.servers["t"].conn.cs
	raw := func() time.Duration {
		start := time.Now()
		if res, err := cs.CallTool(ctx, "echo", arg, ""); err != nil || res.IsError {
			b.Fatalf("client call: %+v %v", res, err)
		}
		return time.Since(start)
	}
	mcpTimes := make([]time.Duration, 0, b.N)
	readTimes := make([]time.Duration, 0, b.N)
	clientTimes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		mcpTimes = append(mcpTimes, run(mcpTool, mcpCall))
		readTimes = append(readTimes, run(read, readCall))
		clientTimes = append(clientTimes, raw())
	}
	b.StopTimer()
	slices.Sort(mcpTimes)
	slices.Sort(readTimes)
	slices.Sort(clientTimes)
	e, r, k := mcpTimes[len(mcpTimes)/2], readTimes[len(readTimes)/2], clientTimes[len(clientTimes)/2]
	b.ReportMetric(float64(k.Microseconds()), "client-median-µs")
	b.ReportMetric(float64(e)/float64(k), "mcp/client")
	b.ReportMetric(float64(e.Microseconds()), "mcp-median-µs")
	b.ReportMetric(float64(r.Microseconds()), "read-median-µs")
	b.ReportMetric(float64(e)/float64(r), "mcp/read")
}
