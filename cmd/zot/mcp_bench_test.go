package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkSpawnToPingMCP times `zot rpc` from its start to the answer
// of its first ping, with no MCP server and with three stdio servers in
// the project's .zot/mcp.json (the Go test server of package mcphost),
// alternately, so that the machine's load weighs on both alike. Servers
// start in the background: the ping must not wait for them.
func BenchmarkSpawnToPingMCP(b *testing.B) {
	server := filepath.Join(b.TempDir(), "mcpserver")
	if out, err := exec.Command("go", "build", "-o", server, "../../internal/mcphost/testdata/mcpserver").CombinedOutput(); err != nil {
		b.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	bare, withMCP := b.TempDir(), b.TempDir()
	os.MkdirAll(filepath.Join(withMCP, ".zot"), 0o755)
	servers := map[string]any{}
	for _, name := range []string{"one", "two", "three"} {
		servers[name] = map[string]any{"command": server}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(withMCP, ".zot", "mcp.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	env := append(cleanEnv(), "ZOT_VALIDATE=0")
	ping := func(cwd string) time.Duration {
		cmd := exec.Command(zotBin, "rpc", "--provider", "scripted", "--cwd", cwd)
		cmd.Env = env
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		in.Write([]byte(`{"id":1,"type":"ping"}` + "\n"))
		line, err := bufio.NewReader(out).ReadBytes('\n')
		took := time.Since(start)
		if err != nil || !json.Valid(line) {
			b.Fatalf("ping: %q %v", line, err)
		}
		in.Close()
		cmd.Wait()
		return took
	}
	var without, with []time.Duration
	b.ResetTimer()
	for range b.N {
		without = append(without, ping(bare))
		with = append(with, ping(withMCP))
	}
	b.StopTimer()
	slices.Sort(without)
	slices.Sort(with)
	w, x := with[len(with)/2], without[len(without)/2]
	b.ReportMetric(float64(x.Microseconds()), "none-median-µs")
	b.ReportMetric(float64(w.Microseconds()), "three-median-µs")
	b.ReportMetric(float64(w)/float64(x), "three/none")
}
