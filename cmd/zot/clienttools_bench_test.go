package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkClientToolRoundTrip compares a client tool's round trip over
// zot rpc with an extension tool's: one zot rpc with the todo example
// extension and a client tool registered, whose scripted model calls
// todo (list) and the client tool in turn. Each is timed from its
// tool_call event to its tool_result event as the client reads them: for
// the client tool that window holds the client_tool_call going out, the
// client's client_tool_result coming in, and zot handing it on; for the
// extension's, the tool_call frame to the extension and its answer. It
// reports both medians and their ratio (the goal: client/ext ≤ 1.2).
func BenchmarkClientToolRoundTrip(b *testing.B) {
	dir := b.TempDir()
	extDir := filepath.Join(dir, "todo")
	if err := os.MkdirAll(extDir, 0o755); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(extDir, "todo"), "../../examples/extensions/todo").CombinedOutput(); err != nil {
		b.Fatalf("building the todo extension: %v\n%s", err, out)
	}
	manifest, err := os.ReadFile("../../examples/extensions/todo/extension.json")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extDir, "extension.json"), manifest, 0o644); err != nil {
		b.Fatal(err)
	}
	const warm = 3
	n := b.N + warm
	var turns []any
	for range n {
		for _, call := range []map[string]any{
			{"name": "todo", "args": map[string]any{"action": "list"}},
			{"name": "lookup", "args": map[string]any{"number": 42}},
		} {
			turns = append(turns, map[string]any{"steps": []any{map[string]any{"tool_calls": []any{call}}, map[string]any{"text": "ok"}}})
		}
	}
	data, _ := json.Marshal(map[string]any{"turns": turns})
	scriptFile := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptFile, data, 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(zotBin, "rpc", "--provider", "scripted", "--script", scriptFile, "--cwd", dir, "--ext", extDir)
	cmd.Env = append(cleanEnv(), "ZOT_VALIDATE=0", "ZOT_HOME="+filepath.Join(dir, "home"))
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewReader(outPipe)
	send := func(line string) {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	type frame struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Error  string `json:"error"`
	}
	read := func() frame {
		line, err := out.ReadBytes('\n')
		if err != nil {
			b.Fatalf("reading zot's output: %v", err)
		}
		var f frame
		_ = json.Unmarshal(line, &f)
		return f
	}
	send(`{"id":"r","type":"register_tools","tools":[{"name":"lookup","read_only":true}]}`)
	if f := read(); f.Type != "response" || f.Error != "" {
		b.Fatalf("register_tools: %+v", f)
	}
	// out and back split the client tool's window: tool_call to
	// client_tool_call read, client_tool_result sent to tool_result read.
	var outLeg, backLeg []time.Duration
	// trip runs one prompt and returns its tool_call → tool_result time.
	trip := func(i int) time.Duration {
		var answered time.Duration
		send(fmt.Sprintf(`{"id":"p%d","type":"prompt","message":"go"}`, i))
		var began, took time.Duration
		start := time.Now()
		for {
			f := read()
			switch f.Type {
			case "tool_call":
				began = time.Since(start)
			case "client_tool_call":
				answered = time.Since(start)
				outLeg = append(outLeg, answered-began)
				send(`{"type":"client_tool_result","call_id":"` + f.CallID + `","text":"#42: login fails"}`)
			case "tool_result":
				took = time.Since(start) - began
				if answered > 0 {
					backLeg = append(backLeg, time.Since(start)-answered)
				}
			case "error":
				b.Fatalf("prompt %d failed", i)
			case "done":
				if took == 0 {
					b.Fatalf("prompt %d ran no tool", i)
				}
				return took
			}
		}
	}
	for i := range warm {
		trip(2 * i)
		trip(2*i + 1)
	}
	var ext, client []time.Duration
	outLeg, backLeg = nil, nil
	b.ResetTimer()
	for i := warm; i < n; i++ {
		ext = append(ext, trip(2*i))
		client = append(client, trip(2*i+1))
	}
	b.StopTimer()
	slices.Sort(ext)
	slices.Sort(client)
	e, c := ext[len(ext)/2], client[len(client)/2]
	b.ReportMetric(float64(e.Microseconds()), "ext-median-µs")
	b.ReportMetric(float64(c.Microseconds()), "client-median-µs")
	b.ReportMetric(float64(c)/float64(e), "client/ext")
	slices.Sort(outLeg)
	slices.Sort(backLeg)
	b.ReportMetric(float64(outLeg[len(outLeg)/2].Microseconds()), "client-out-µs")
	b.ReportMetric(float64(backLeg[len(backLeg)/2].Microseconds()), "client-back-µs")
}
