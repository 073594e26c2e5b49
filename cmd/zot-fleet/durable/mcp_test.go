package durable

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/tools"
)

// testServer builds the MCP test server (internal/mcphost/testdata/
// mcpserver) and returns the configuration of a server t running it
// through a script that counts its starts in the returned file.
func testServer(t *testing.T) (mcphost.Server, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", bin, "./internal/mcphost/testdata/mcpserver")
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	starts := filepath.Join(dir, "starts")
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho start >> \"$STARTS\"\nexec \"$SERVER\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return mcphost.Server{Name: "t", Command: script, Env: map[string]string{"STARTS": starts, "SERVER": bin}}, starts
}

func startsOf(t *testing.T, file string) int {
	t.Helper()
	b, _ := os.ReadFile(file)
	return strings.Count(string(b), "start")
}

// call runs the tool name of spec through x and returns its text.
func call(t *testing.T, x *MCPServers, cwd string, spec mcphost.Server, name, args string) (string, bool) {
	t.Helper()
	tool, release, why := x.Tool(context.Background(), cwd, spec, name)
	if tool == nil {
		t.Fatalf("%s: no tool: %s", name, why)
	}
	defer release()
	res, err := tool.Run(context.Background(), tools.Call{ID: "c1", Args: []byte(args)})
	if err != nil {
		return err.Error(), true
	}
	var b strings.Builder
	for _, blk := range res.Content {
		if tx, ok := blk.(*llm.TextBlock); ok {
			b.WriteString(tx.Text)
		}
	}
	return b.String(), res.IsError
}

// TestMCPServersShared: the calls of one configuration in one folder
// share one server; another folder gets its own; a server that crashed
// is started afresh at the next call; one unused for Idle is stopped and
// started again when called; a tool the server lacks, or a server that
// does not start, is reported, not run; after Close nothing starts.
func TestMCPServersShared(t *testing.T) {
	spec, starts := testServer(t)
	x := &MCPServers{Idle: time.Second}
	defer x.Close()
	cwd, other := t.TempDir(), t.TempDir()

	for i := 0; i < 2; i++ {
		if got, isErr := call(t, x, cwd, spec, "mcp__t__echo", `{"text":"hi"}`); isErr || !strings.Contains(got, "echo: hi") {
			t.Fatalf("echo: %q (error %v)", got, isErr)
		}
	}
	if n := startsOf(t, starts); n != 1 {
		t.Errorf("two calls in one folder started the server %d times, want once", n)
	}
	call(t, x, other, spec, "mcp__t__echo", `{"text":"hi"}`)
	if n := startsOf(t, starts); n != 2 {
		t.Errorf("a call in another folder: %d starts, want 2", n)
	}

	if _, isErr := call(t, x, cwd, spec, "mcp__t__crash", `{}`); !isErr {
		t.Error("the crash call did not fail")
	}
	if got, isErr := call(t, x, cwd, spec, "mcp__t__echo", `{"text":"again"}`); isErr || !strings.Contains(got, "echo: again") {
		t.Errorf("the call after a crash: %q (error %v)", got, isErr)
	}
	if n := startsOf(t, starts); n != 3 {
		t.Errorf("after the crash: %d starts, want 3 (started afresh)", n)
	}

	if tool, _, why := x.Tool(context.Background(), cwd, spec, "mcp__t__nothing"); tool != nil || !strings.Contains(why, "no tool") {
		t.Errorf("a tool the server lacks: %v, %q", tool, why)
	}
	bad := mcphost.Server{Name: "bad", Command: filepath.Join(t.TempDir(), "missing")}
	if tool, _, why := x.Tool(context.Background(), cwd, bad, "mcp__bad__x"); tool != nil || why == "" {
		t.Errorf("a server that does not start: %v, %q", tool, why)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		x.mu.Lock()
		n := len(x.running)
		x.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d servers still run after being unused for twice their idle time and more", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	call(t, x, cwd, spec, "mcp__t__echo", `{"text":"hi"}`)
	if n := startsOf(t, starts); n != 4 {
		t.Errorf("a call after the idle stop: %d starts, want 4", n)
	}

	x.Close()
	if tool, _, why := x.Tool(context.Background(), cwd, spec, "mcp__t__echo"); tool != nil || !strings.Contains(why, mcphost.ErrClosed.Error()) {
		t.Errorf("after Close: %v, %q", tool, why)
	}
}
