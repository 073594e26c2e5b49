package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// everythingServer returns the command of the reference MCP server
// @modelcontextprotocol/server-everything, pinned in testtools/. Without
// node or the testtools install the test is skipped, unless
// ZOT_E2E_REQUIRED is set (make test sets it), when it fails.
func everythingServer(t *testing.T) (node, script string) {
	t.Helper()
	tools, _ := filepath.Abs(filepath.Join("..", "..", "testtools"))
	script = filepath.Join(tools, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		msg := fmt.Sprintf("@modelcontextprotocol/server-everything is not installed (%v): run make testtools", err)
		if os.Getenv("ZOT_E2E_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, script
}

var (
	goServerOnce sync.Once
	goServerPath string
	goServerErr  error
)

// goServer builds the Go test MCP server of package mcphost once.
func goServer(t *testing.T) string {
	t.Helper()
	goServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zot-mcpserver")
		if err != nil {
			goServerErr = err
			return
		}
		goServerPath = filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", goServerPath, "../../internal/mcphost/testdata/mcpserver").CombinedOutput()
		if err != nil {
			goServerErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if goServerErr != nil {
		t.Fatalf("building the test MCP server: %v", goServerErr)
	}
	return goServerPath
}

// mcpConfig writes an mcpServers file and returns its path.
func mcpConfig(t *testing.T, dir string, servers map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// resultOf returns the tool_result of call id among evs, as JSON.
func resultOf(t *testing.T, evs []wire.Event, id string) (string, bool) {
	t.Helper()
	for _, ev := range evs {
		if r, ok := ev.(*wire.ToolResultEvent); ok && r.ID == id {
			data, _ := json.Marshal(r.Content)
			return string(data), r.IsError
		}
	}
	t.Fatalf("no tool_result for %s in %v", id, types(evs))
	return "", false
}

func mcpServersResult(t *testing.T, r *wire.Response) []wire.MCPServerInfo {
	t.Helper()
	var res wire.MCPServersResult
	if err := json.Unmarshal(r.Data, &res); err != nil {
		t.Fatalf("%s: %v", r.Data, err)
	}
	return res.Servers
}

// The reference server from npm, configured by --mcp-config, called by
// the model through zot rpc: a text tool, a tool that reports progress,
// and an image.
func TestMCPReferenceServerThroughRPC(t *testing.T) {
	node, server := everythingServer(t)
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"everything": map[string]any{"command": node, "args": []string{server, "stdio"}}})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{
			map[string]any{"id": "e1", "name": "mcp__everything__echo", "args": map[string]any{"message": "hello mcp"}},
			map[string]any{"id": "e2", "name": "mcp__everything__trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 2}},
			map[string]any{"id": "e3", "name": "mcp__everything__get-tiny-image", "args": map[string]any{}},
		}},
		map[string]any{"text": "done"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--mcp-config", cfg)...)
	p.send(`{"id":"1","type":"prompt","message":"use the tools"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	if got, isErr := resultOf(t, evs, "e1"); isErr || !strings.Contains(got, "Echo: hello mcp") {
		t.Fatalf("echo result = %s (error %v)", got, isErr)
	}
	if got, isErr := resultOf(t, evs, "e2"); isErr || !strings.Contains(got, "Long running operation completed") {
		t.Fatalf("long-running result = %s (error %v)", got, isErr)
	}
	var progress int
	for _, ev := range evs {
		if tp, ok := ev.(*wire.ToolProgressEvent); ok && tp.ID == "e2" {
			progress++
		}
	}
	if progress == 0 {
		t.Fatalf("no tool_progress for the long-running operation: %v", types(evs))
	}
	if got, _ := resultOf(t, evs, "e3"); !strings.Contains(got, `"type":"image"`) {
		t.Fatalf("tiny image result = %s", got)
	}
	p.send(`{"id":"2","type":"get_state"}`)
	r, _ = p.response()
	var st wire.StateResult
	if err := json.Unmarshal(r.Data, &st); err != nil || st.McpServers == nil || *st.McpServers != 1 {
		t.Fatalf("get_state = %s", r.Data)
	}
	p.send(`{"id":"3","type":"mcp_list"}`)
	r, _ = p.response()
	list := mcpServersResult(t, r)
	if len(list) != 1 || list[0].Name != "everything" || list[0].Status != "ready" || len(list[0].Tools) < 5 {
		t.Fatalf("mcp_list = %s", r.Data)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// Servers added and removed while a prompt runs: answered at once, never
// busy; the crash of a server mid-call fails the call, says so in a
// notice, and the server is back at the next prompt.
func TestMCPAddRemoveCrashThroughRPC(t *testing.T) {
	bin := goServer(t)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "slowly", "chunk": 1, "delay_ms": 40}}},
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "mcp__t__crash"}}},
			map[string]any{"text": "it crashed"},
		}},
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "c2", "name": "mcp__t__echo", "args": map[string]any{"text": "back"}}}},
			map[string]any{"text": "ok"},
		}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--strict-mcp-config")...)
	p.send(`{"id":"1","type":"prompt","message":"take your time"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	add := fmt.Sprintf(`{"id":"2","type":"mcp_add","servers":[{"name":"t","command":%q},{"name":"gone","command":%q}]}`, bin, bin)
	p.send(add)
	r, _ = p.response()
	wantResponse(t, r, "mcp_add", true, "")
	if list := mcpServersResult(t, r); len(list) != 2 {
		t.Fatalf("mcp_add answered %s", r.Data)
	}
	p.send(`{"id":"3","type":"mcp_remove","name":"gone"}`)
	r, _ = p.response()
	wantResponse(t, r, "mcp_remove", true, "")
	p.send(`{"id":"4","type":"mcp_remove","name":"never"}`)
	r, _ = p.response()
	wantResponse(t, r, "mcp_remove", false, wire.CodeNotFound)
	p.send(`{"id":"5","type":"mcp_add","servers":[{"name":"bad"}]}`)
	r, _ = p.response()
	wantResponse(t, r, "mcp_add", false, wire.CodeInvalidParams)
	p.untilDone()

	p.send(`{"id":"6","type":"prompt","message":"crash it"}`)
	r, _ = p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	if got, isErr := resultOf(t, evs, "c1"); !isErr || !strings.Contains(got, `MCP server \"t\"`) {
		t.Fatalf("crash result = %s (error %v)", got, isErr)
	}
	// The crash notice may come before or after the done.
	var notice bool
	for _, ev := range evs {
		if n, ok := ev.(*wire.ExtNotifyEvent); ok && n.Source == "mcp:t" && n.Level == "error" {
			notice = true
		}
	}
	p.send(`{"id":"7","type":"prompt","message":"again"}`)
	r, more := p.response()
	for _, ev := range more {
		if n, ok := ev.(*wire.ExtNotifyEvent); ok && n.Source == "mcp:t" && n.Level == "error" {
			notice = true
		}
	}
	if !notice {
		t.Fatalf("no ext_notify about the crash: %v %v", types(evs), types(more))
	}
	wantResponse(t, r, "prompt", true, "")
	evs = p.untilDone()
	if got, isErr := resultOf(t, evs, "c2"); isErr || !strings.Contains(got, "echo: back") {
		t.Fatalf("echo after the restart = %s (error %v)", got, isErr)
	}
	p.send(`{"id":"8","type":"mcp_list"}`)
	r, _ = p.response()
	if list := mcpServersResult(t, r); len(list) != 1 || list[0].Restarts != 1 || list[0].Status != "ready" {
		t.Fatalf("mcp_list = %s", r.Data)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// The project's .zot/mcp.json runs only in a trusted folder; there it wins
// over the home's mcp.json per name, and
// print mode uses the servers too.
func TestMCPConfigDiscoveryAndPrintMode(t *testing.T) {
	bin := goServer(t)
	home := t.TempDir()
	mcpConfig(t, home, map[string]any{
		"shared":   map[string]any{"command": "/nonexistent/from-home"},
		"homeonly": map[string]any{"command": bin},
	})
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".zot"), 0o755); err != nil {
		t.Fatal(err)
	}
	mcpConfig(t, filepath.Join(cwd, ".zot"), map[string]any{"shared": map[string]any{"command": bin, "args": []string{"-name", "project"}}})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": "mcp__shared__echo", "args": map[string]any{"text": "from the project"}}}},
		map[string]any{"text": "fine"},
	}}}})
	// Untrusted, the project's server does not start: the home's "shared"
	// (which cannot start) is the one there is, and stderr says why.
	cmd := exec.Command(zotBin, "-p", "go", "--json", "--provider", "scripted", "--script", s, "--cwd", cwd)
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+home)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot -p: %v\n%s", err, out)
	}
	if strings.Contains(string(out), `echo: from the project`) || !strings.Contains(errb.String(), "not starting its MCP servers (shared) in ") {
		t.Fatalf("untrusted: the project's server ran:\n%s\nstderr:\n%s", out, errb.String())
	}
	// Trusted, it runs, and wins its name over the home's.
	if o, e, code := runZot(t, "", []string{"ZOT_HOME=" + home}, "trust", cwd); code != 0 {
		t.Fatalf("zot trust: %d %s %s", code, o, e)
	}
	cmd = exec.Command(zotBin, "-p", "go", "--json", "--provider", "scripted", "--script", s, "--cwd", cwd)
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+home)
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("zot -p: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `echo: from the project`) {
		t.Fatalf("print mode output:\n%s", out)
	}

	p := start(t, []string{"ZOT_HOME=" + home}, "rpc", "--provider", "scripted", "--cwd", cwd)
	p.send(`{"id":"1","type":"mcp_list"}`)
	r, _ := p.response()
	list := mcpServersResult(t, r)
	if len(list) != 2 || list[0].Name != "homeonly" || list[1].Name != "shared" {
		t.Fatalf("mcp_list = %s", r.Data)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// A server that never answers initialize does not hold the prompt past
// --mcp-start-timeout, and a notice says so; an abort during an MCP call
// reaches the server as a cancellation.
func TestMCPSlowStartAndAbortThroughRPC(t *testing.T) {
	bin := goServer(t)
	dir := t.TempDir()
	cancelled := filepath.Join(dir, "cancelled")
	cfg := mcpConfig(t, dir, map[string]any{
		"mute": map[string]any{"command": bin, "args": []string{"-mode", "hang"}},
		"t":    map[string]any{"command": bin, "args": []string{"-cancel-file", cancelled}},
	})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "s1", "name": "mcp__t__slow", "args": map[string]any{"ms": 600000}}}},
		map[string]any{"text": "never"},
	}}}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--mcp-config", cfg, "--strict-mcp-config", "--mcp-start-timeout", "300ms")...)
	p.send(`{"id":"1","type":"prompt","message":"slow"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.until("tool_progress")
	var late bool
	for _, ev := range evs {
		if n, ok := ev.(*wire.ExtNotifyEvent); ok && n.Source == "mcp:mute" && n.Level == "warn" {
			late = true
		}
	}
	if !late {
		t.Fatalf("no notice about the server that never answered: %v", types(evs))
	}
	p.send(`{"id":"2","type":"abort"}`)
	r, _ = p.response()
	wantResponse(t, r, "abort", true, "")
	evs = p.untilDone()
	var aborted bool
	for _, ev := range evs {
		if te, ok := ev.(*wire.TurnEndEvent); ok && te.Stop == wire.StopAborted {
			aborted = true
		}
	}
	if !aborted {
		t.Fatalf("no turn_end{aborted}: %v", types(evs))
	}
	deadline := time.Now().Add(hangGuard)
	for {
		if data, _ := os.ReadFile(cancelled); string(data) == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never saw the cancellation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}
