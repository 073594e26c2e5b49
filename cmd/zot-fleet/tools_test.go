package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tools that do not live on a worker: a client's, an extension's,
// the ACP client's files. Their calls go to the daemon holding the
// session, which runs them as in process; the client sees the same
// updates in the same order as with the in-process executor.

// callThenAnswer is a model that calls tool with args and, given its
// result, answers.
func callThenAnswer(tool, args string) func(modelRequest) []answerPart {
	return func(r modelRequest) []answerPart {
		if r.Results == 0 {
			return []answerPart{{Text: "Calling it. "}, {Tool: tool, Args: args}}
		}
		return []answerPart{{Text: "Done with it."}}
	}
}

// normUpdates drops what differs between two runs of the same turn (the
// timings in _meta).
func normUpdates(us []json.RawMessage) []string {
	var out []string
	for _, u := range us {
		var m map[string]any
		_ = json.Unmarshal(u, &m)
		delete(m, "_meta")
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// toolRun is one prompt's run in a daemon of its own.
type toolRun struct {
	// daemonFlags are more flags of the daemon.
	daemonFlags []string
	// caps and serve make the ACP client (dialACPWith).
	caps  map[string]any
	serve func(method string, params json.RawMessage) (any, bool)
	// setup runs once the session is made.
	setup func(c *acpClient, session string)
	// mcp are the session's mcpServers (session/new).
	mcp []any
	// perm is the daemon's --permission; "" allows all.
	perm string
}

// sameAsInProcess runs one prompt through the in-process daemon and the
// fleet's and checks the client saw the same updates, in the same order;
// it returns what the model was given as the tool's result each time.
func sameAsInProcess(t *testing.T, f *fleetSetup, r toolRun) {
	t.Helper()
	run := func(name string, inProcess bool) []json.RawMessage {
		perm := r.perm
		if perm == "" {
			perm = "allow"
		}
		_, sock := f.daemonAs(name, inProcess, perm, r.daemonFlags...)
		work := filepath.Join(f.dir, "work") // the same folder: paths are in the updates
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		caps := r.caps
		if caps == nil {
			caps = map[string]any{}
		}
		c := dialACPWith(t, sock, caps, r.serve)
		s := c.newSessionMCP(work, r.mcp)
		if r.setup != nil {
			r.setup(c, s)
		}
		c.taken()
		res := c.prompt(s, "use the tool")
		if !strings.Contains(string(res), `"stopReason":"end_turn"`) {
			t.Fatalf("%s: prompt answered %s", name, res)
		}
		return c.taken()
	}
	want := normUpdates(run("inprocess", true))
	got := normUpdates(run("fleet", false))
	if !slices.Equal(want, got) {
		t.Errorf("updates differ:\nin process:\n%s\nfleet:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if n0, n1 := f.model.count(0), f.model.count(1); n0 != 2 || n1 != 2 {
		t.Errorf("model requests: %d first calls and %d second calls for two turns; want 2 and 2", n0, n1)
	}
}

// results records the tool results the model was given.
type results struct{ last atomic.Value }

func (r *results) model(tool, args string) func(modelRequest) []answerPart {
	inner := callThenAnswer(tool, args)
	return func(req modelRequest) []answerPart {
		if req.Results > 0 {
			r.last.Store(req.LastResult)
		}
		return inner(req)
	}
}

func (r *results) String() string {
	s, _ := r.last.Load().(string)
	return s
}

// lookupTool is the tool an ACP client registers.
var lookupTool = map[string]any{"name": "lookup", "description": "look a key up in the client",
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"key": map[string]any{"type": "string"}}}}

// registerLookup registers lookupTool for the session.
func registerLookup(c *acpClient, session string) {
	c.call("_zot/session/register_tools", map[string]any{"sessionId": session, "tools": []any{lookupTool}})
}

// TestFleetClientTool: a tool an ACP client registered
// (_zot/session/register_tools) is offered on the fleet; the model's
// call of it reaches the client through the daemon (_zot/tool/call),
// once per turn, and the client sees the same updates as in process.
func TestFleetClientTool(t *testing.T) {
	var got results
	f := newFleet(t, got.model("lookup", `{"key":"color"}`))
	f.worker("w1")
	var calls atomic.Int32
	sameAsInProcess(t, f, toolRun{
		serve: func(method string, params json.RawMessage) (any, bool) {
			if method != "_zot/tool/call" || !strings.Contains(string(params), `"color"`) {
				return nil, false
			}
			calls.Add(1)
			return map[string]any{"text": "the color is blue"}, true
		},
		setup: registerLookup,
	})
	if n := calls.Load(); n != 2 {
		t.Errorf("the client was asked %d times for two turns, want 2", n)
	}
	if !strings.Contains(got.String(), "the color is blue") {
		t.Errorf("the model was given %q, want the client's answer", got.String())
	}
}

// TestFleetClientToolApproval: with --permission ask, a client tool's
// call on the fleet is put to the client once (by the daemon that runs
// it, not also by a worker), then runs once, as in process.
func TestFleetClientToolApproval(t *testing.T) {
	var got results
	f := newFleet(t, got.model("lookup", `{"key":"color"}`))
	f.worker("w1")
	var calls atomic.Int32
	var clients []*acpClient // in process, then the fleet's
	sameAsInProcess(t, f, toolRun{
		perm: "ask",
		serve: func(method string, params json.RawMessage) (any, bool) {
			if method != "_zot/tool/call" {
				return nil, false
			}
			calls.Add(1)
			return map[string]any{"text": "the color is blue"}, true
		},
		setup: func(c *acpClient, s string) {
			registerLookup(c, s)
			clients = append(clients, c)
		},
	})
	if n := calls.Load(); n != 2 {
		t.Errorf("the client was asked to run the tool %d times for two turns, want 2", n)
	}
	for i, c := range clients {
		if c.asked != 1 {
			t.Errorf("client %d was asked for approval %d times in its turn, want once", i, c.asked)
		}
	}
}

// TestFleetACPClientFiles: with a client that offers fs/read_text_file,
// read goes to the client (its unsaved buffer) on the fleet as in
// process, not to a worker's disk.
func TestFleetACPClientFiles(t *testing.T) {
	var got results
	f := newFleet(t, got.model("read", `{"path":"notes.txt"}`))
	f.worker("w1")
	var reads atomic.Int32
	sameAsInProcess(t, f, toolRun{
		caps: map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}},
		serve: func(method string, params json.RawMessage) (any, bool) {
			if method != "fs/read_text_file" {
				return nil, false
			}
			reads.Add(1)
			return map[string]any{"content": "unsaved text in the editor\n"}, true
		},
	})
	if n := reads.Load(); n != 2 {
		t.Errorf("the client was asked %d times for the file in two turns, want 2", n)
	}
	if !strings.Contains(got.String(), "unsaved text in the editor") {
		t.Errorf("the model was given %q, want the editor's text", got.String())
	}
}

// TestFleetACPClientTerminal: with a client that offers terminal/* (and
// no sandbox confining bash), bash runs in the client's terminal on the
// fleet as in process, never on a worker.
func TestFleetACPClientTerminal(t *testing.T) {
	var got results
	f := newFleet(t, got.model("bash", `{"command":"echo ran >> log.txt"}`))
	f.worker("w1")
	var created atomic.Int32
	sameAsInProcess(t, f, toolRun{
		// A sandbox that confines bash keeps it in zot's own shell.
		daemonFlags: []string{"--sandbox", "full"},
		caps:        map[string]any{"terminal": true},
		serve: func(method string, params json.RawMessage) (any, bool) {
			switch method {
			case "terminal/create":
				created.Add(1)
				return map[string]any{"terminalId": "term-1"}, true
			case "terminal/wait_for_exit":
				return map[string]any{"exitCode": 0}, true
			case "terminal/output":
				return map[string]any{"output": "ran in the editor's terminal\n", "truncated": false, "exitStatus": map[string]any{"exitCode": 0}}, true
			case "terminal/release", "terminal/kill":
				return map[string]any{}, true
			}
			return nil, false
		},
	})
	if n := created.Load(); n != 2 {
		t.Errorf("the client's terminal ran %d commands in two turns, want 2", n)
	}
	if !strings.Contains(got.String(), "ran in the editor's terminal") {
		t.Errorf("the model was given %q, want the terminal's output", got.String())
	}
	if _, err := os.Stat(filepath.Join(f.dir, "work", "log.txt")); err == nil {
		t.Error("the command ran on this machine (a worker's shell), not in the client's terminal")
	}
}

// TestFleetExtensionTool: an extension's tool (the daemon's --ext) is
// offered on the fleet and runs in the daemon, its result the model's,
// the updates as in process.
func TestFleetExtensionTool(t *testing.T) {
	var got results
	f := newFleet(t, got.model("py_echo", `{"text":"hello from the model"}`))
	f.worker("w1")
	sameAsInProcess(t, f, toolRun{daemonFlags: []string{"--ext", pyExtension(t, f.dir, "py")}})
	if !strings.Contains(got.String(), "hello from the model") {
		t.Errorf("the model was given %q, want the extension's echo", got.String())
	}
}

// pyExtension writes an extension folder running the extension host's
// Python test extension (internal/exthost/testdata/py) as name.
func pyExtension(t *testing.T, dir, name string) string {
	t.Helper()
	return pyExtensionMode(t, dir, name, "ok")
}

// pyExtensionMode is pyExtension in one of the extension's modes.
func pyExtensionMode(t *testing.T, dir, name, mode string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "internal", "exthost", "testdata", "py", "ext.py"))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "ext-"+name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": name, "exec": "python3", "args": []string{script, mode, name}})
	if err := os.WriteFile(filepath.Join(folder, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// TestFleetDaemonKilledMidDaemonCall: kill -9 of the daemon (and its
// client) while a client tool's call waits in it. The call is not run
// again: the model is told it was interrupted, and the turn goes on in
// the fleet; a daemon started again shows all of it on session/load.
func TestFleetDaemonKilledMidDaemonCall(t *testing.T) {
	var got results
	f := newFleet(t, got.model("lookup", `{"key":"color"}`))
	f.worker("w1")
	d, sock := f.daemon("d", false)
	asked := make(chan struct{}, 4)
	c := dialACPWith(t, sock, map[string]any{}, func(method string, _ json.RawMessage) (any, bool) {
		if method == "_zot/tool/call" {
			asked <- struct{}{}
		}
		return nil, false // the call never ends
	})
	s := c.newSession(f.dir)
	registerLookup(c, s)
	_ = promptAsync(t, c, s, "use the tool")
	select {
	case <-asked:
	case <-time.After(hang):
		t.Fatal("the client tool was never called")
	}
	d.kill()
	_ = os.Remove(sock)
	_, sock = f.daemon("d2", false)
	c2 := dialACP(t, sock)
	c2.call("session/load", map[string]any{"sessionId": s, "cwd": f.dir, "mcpServers": []any{}})
	updates := c2.taken()
	if !strings.Contains(got.String(), "the zot daemon running this call went away") {
		t.Errorf("the model was given %q, want the call reported interrupted", got.String())
	}
	if txt := text(updates); !strings.HasSuffix(txt, "Done with it.") {
		t.Errorf("session/load after the restart shows %q, want the turn's end", txt)
	}
	if n0, n1 := f.model.count(0), f.model.count(1); n0 != 1 || n1 != 1 {
		t.Errorf("model requests: %d first and %d second; want each once", n0, n1)
	}
	select {
	case <-asked:
		t.Error("the client tool was called again")
	default:
	}
}

// newSessionMCP makes a session in cwd with the MCP servers mcp.
func (c *acpClient) newSessionMCP(cwd string, mcp []any) string {
	c.t.Helper()
	if mcp == nil {
		mcp = []any{}
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": mcp}), &r)
	return r.SessionID
}

// mcpServer builds internal/mcphost/testdata/mcpserver and returns the
// session/new entry of a server t running it through a script that
// notes, in the file where, which program started it (worker for
// zot-fleet worker, daemon for zot daemon); refuse names a program it
// then refuses to start for (it exits at once).
func mcpServer(t *testing.T, dir, refuse string) (server map[string]any, where string) {
	t.Helper()
	bin := filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", bin, "./internal/mcphost/testdata/mcpserver")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	where = filepath.Join(dir, "mcp-started-by")
	script := filepath.Join(dir, "mcpserver.sh")
	body := `#!/bin/sh
by=$(tr '\0' '\n' < /proc/$PPID/cmdline | sed -n 2p)
echo "$by" >> "$WHERE"
[ "$by" = "$REFUSE" ] && exit 1
exec "$SERVER" "$@"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []any{
		map[string]any{"name": "WHERE", "value": where},
		map[string]any{"name": "SERVER", "value": bin},
		map[string]any{"name": "REFUSE", "value": refuse},
	}
	return map[string]any{"name": "t", "command": script, "args": []any{}, "env": env}, where
}

// startedBy counts the starts of the MCP test server by each program.
func startedBy(t *testing.T, where string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(where)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, line := range strings.Fields(string(data)) {
		n[line]++
	}
	return n
}

// TestFleetMCPToolOnWorker: an MCP server's tool (a session's
// mcpServers) is offered on the fleet, and its call runs on the worker
// holding the working directory, with a server of the session's
// configuration started there once; the client sees the same updates as
// in process.
func TestFleetMCPToolOnWorker(t *testing.T) {
	var got results
	f := newFleet(t, got.model("mcp__t__echo", `{"text":"hello from the model"}`))
	f.worker("w1")
	server, where := mcpServer(t, f.dir, "")
	sameAsInProcess(t, f, toolRun{mcp: []any{server}})
	if !strings.Contains(got.String(), "echo: hello from the model") {
		t.Errorf("the model was given %q, want the server's echo", got.String())
	}
	if n := startedBy(t, where); n["worker"] != 1 || n["daemon"] != 2 {
		t.Errorf("the MCP server was started %v; want once by the worker (which ran the call) and once by each daemon", n)
	}
}

// TestFleetMCPToolFallsBackToDaemon: an MCP server that does not start
// on the worker has its tool's call answered by the daemon, the updates
// as in process.
func TestFleetMCPToolFallsBackToDaemon(t *testing.T) {
	var got results
	f := newFleet(t, got.model("mcp__t__echo", `{"text":"hello from the model"}`))
	f.worker("w1")
	server, where := mcpServer(t, f.dir, "worker")
	sameAsInProcess(t, f, toolRun{mcp: []any{server}})
	if !strings.Contains(got.String(), "echo: hello from the model") {
		t.Errorf("the model was given %q, want the server's echo", got.String())
	}
	if n := startedBy(t, where); n["worker"] < 1 || n["daemon"] != 2 {
		t.Errorf("the MCP server was started %v; want tried by the worker and started by each daemon", n)
	}
}

// TestFleetToolsChangeMidTurn: a tool a client registers while the turn
// runs (during its first call) is offered from the next step on, on the
// fleet as in process: each step asks the session for its tools; a
// model that binds its thinking to the tools (the default Claude) is
// offered the first step's tools at every step, on the fleet as in
// process.
func TestFleetToolsChangeMidTurn(t *testing.T) {
	for _, model := range []string{"claude-sonnet-4-5", ""} {
		t.Run("model="+model, func(t *testing.T) { toolsChangeMidTurn(t, model) })
	}
}

func toolsChangeMidTurn(t *testing.T, model string) {
	f := newFleet(t, func(r modelRequest) []answerPart {
		switch r.Results {
		case 0:
			return []answerPart{{Text: "Calling it. "}, {Tool: "lookup", Args: `{"key":"color"}`}}
		case 1:
			return []answerPart{{Text: "And the next. "}, {Tool: "second", Args: `{"key":"size"}`}}
		}
		return []answerPart{{Text: "Done with it."}}
	})
	f.worker("w1")
	var c *acpClient
	var session string
	var seconds atomic.Int32
	second := map[string]any{"name": "second", "description": "a tool registered mid-turn",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"key": map[string]any{"type": "string"}}}}
	var flags []string
	if model != "" {
		flags = []string{"--model", model}
	}
	sameAsInProcess(t, f, toolRun{
		daemonFlags: flags,
		serve: func(method string, params json.RawMessage) (any, bool) {
			if method != "_zot/tool/call" {
				return nil, false
			}
			var p struct{ Name string }
			_ = json.Unmarshal(params, &p)
			if p.Name == "second" {
				seconds.Add(1)
				return map[string]any{"text": "the size is large"}, true
			}
			// Registered before the answer (serve runs in the reading
			// loop, so this call reads on until its own answer): the
			// next step offers it.
			c.call("_zot/session/register_tools", map[string]any{"sessionId": session, "tools": []any{second}})
			return map[string]any{"text": "the color is blue"}, true
		},
		setup: func(cl *acpClient, s string) {
			c, session = cl, s
			registerLookup(cl, s)
		},
	})
	want := int32(2)
	if model == "" {
		want = 0 // bound: not offered before the next prompt
	}
	if n := seconds.Load(); n != want {
		t.Errorf("the tool registered mid-turn was called %d times in two turns, want %d", n, want)
	}
}

// TestFleetTurnBlocked: an extension that blocks every step (a
// turn_start intercept) ends the prompt on the fleet with the same
// updates and error as in process.
func TestFleetTurnBlocked(t *testing.T) {
	var got results
	f := newFleet(t, got.model("bash", `{"command":"true"}`))
	f.worker("w1")
	ext := pyExtensionMode(t, f.dir, "py", "turn_guard")
	run := func(name string, inProcess bool) ([]string, string) {
		_, sock := f.daemonAs(name, inProcess, "allow", "--ext", ext)
		c := dialACP(t, sock)
		s := c.newSession(f.dir)
		c.taken()
		_, err := c.try("session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
		return normUpdates(c.taken()), strings.ReplaceAll(fmt.Sprint(err), s, "<session>")
	}
	want, wantErr := run("inprocess", true)
	got2, gotErr := run("fleet", false)
	if !slices.Equal(want, got2) || wantErr != gotErr {
		t.Errorf("in process: %v\n%s\nfleet: %v\n%s", wantErr, strings.Join(want, "\n"), gotErr, strings.Join(got2, "\n"))
	}
	if !strings.Contains(wantErr, "outside business hours") {
		t.Errorf("the prompt answered %s, want it blocked", wantErr)
	}
	if n := f.model.count(0); n != 0 {
		t.Errorf("the model was asked %d times, want never", n)
	}
}

// TestFleetWorkerKilledMidDaemonCall: kill -9 of the worker waiting for
// a client tool's call in the daemon. The call is not made again: the
// worker that takes its next attempt waits for the same run, and the
// model is given its result; the client is asked once.
func TestFleetWorkerKilledMidDaemonCall(t *testing.T) {
	var got results
	f := newFleet(t, got.model("lookup", `{"key":"color"}`))
	w1 := f.worker("w1")
	_, sock := f.daemon("d", false)
	asked := make(chan json.RawMessage, 4)
	var c *acpClient
	c = dialACPWith(t, sock, map[string]any{}, func(method string, _ json.RawMessage) (any, bool) {
		if method == "_zot/tool/call" {
			asked <- c.serving
		}
		return nil, false // answered below
	})
	s := c.newSession(f.dir)
	registerLookup(c, s)
	wait := promptAsync(t, c, s, "use the tool")
	var id json.RawMessage
	select {
	case id = <-asked:
	case <-time.After(hang):
		t.Fatal("the client tool was never called")
	}
	f.worker("w2")
	w1.kill()
	c.reply(id, map[string]any{"text": "the color is blue"})
	if res := wait(); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("the prompt answered %s", res)
	}
	if !strings.Contains(got.String(), "the color is blue") {
		t.Errorf("the model was given %q, want the client's answer", got.String())
	}
	select {
	case <-asked:
		t.Error("the client tool was called again")
	default:
	}
	if n0, n1 := f.model.count(0), f.model.count(1); n0 != 1 || n1 != 1 {
		t.Errorf("model requests: %d first and %d second; want each once", n0, n1)
	}
}

// TestFleetMCPToolCancelled: session/cancel while an MCP server's tool
// runs on the worker cancels the call there (the server hears of it) and
// ends the turn cancelled within seconds.
func TestFleetMCPToolCancelled(t *testing.T) {
	f := newFleet(t, callThenAnswer("mcp__t__slow", `{"ms":60000}`))
	f.worker("w1")
	server, where := mcpServer(t, f.dir, "")
	cancelled := filepath.Join(f.dir, "cancelled")
	server["args"] = []any{"-cancel-file", cancelled}
	_, sock := f.daemon("d", false)
	c := dialACP(t, sock)
	s := c.newSessionMCP(f.dir, []any{server})
	running := make(chan struct{})
	var once sync.Once
	c.mu.Lock()
	c.onUpdate = func(u json.RawMessage) {
		if strings.Contains(string(u), "step 1") { // the server's progress
			once.Do(func() { close(running) })
		}
	}
	c.mu.Unlock()
	wait := promptAsync(t, c, s, "use the tool")
	waitChan(t, "the call's progress", running)
	start := time.Now()
	c.notify("session/cancel", map[string]any{"sessionId": s})
	if res := wait(); !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("the cancelled prompt answered %s", res)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the cancel took %v to end the turn", took)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, _ := os.ReadFile(cancelled); string(b) == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the MCP server never heard the call was cancelled")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := startedBy(t, where); n["worker"] != 1 {
		t.Errorf("the MCP server was started %v; want the call on the worker", n)
	}
}
