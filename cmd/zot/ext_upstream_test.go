package main

// Tests with extensions shaped as zot's own examples are: a Node one run
// as `node index.js`, a Go one run with `go run .` in a folder that is
// its own module, a Python one run as `python3 hello.py`, and a
// fail-closed guard. They live in testdata/upstream and are copied to a
// fresh folder for each test.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// upstreamExt copies testdata/upstream/<name> under dir (as <as>, or
// <name> when as is "") and returns the copy's real path. edit, when not
// nil, changes its manifest first.
func upstreamExt(t *testing.T, dir, name, as string, edit func(m map[string]any)) string {
	t.Helper()
	if as == "" {
		as = name
	}
	src := filepath.Join("testdata", "upstream", name)
	dst := filepath.Join(dir, as)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		file := filepath.Join(dst, "extension.json")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		data, _ = json.Marshal(m)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// realTemp is a fresh temporary directory, its symbolic links resolved.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// needTools skips the test when a runtime it needs is missing.
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed", n)
		}
	}
}

// offlineGo is the environment that keeps `go run` of a test extension
// off the network: it has no dependencies to fetch, and must not try.
var offlineGo = []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"}

// displayOf runs a slash command and returns the text it displays.
func displayOf(t *testing.T, p *proc, id, name, args string) string {
	t.Helper()
	r, _ := p.call(fmt.Sprintf(`{"id":%q,"type":"run_command","name":%q,"args":%q}`, id, name, args))
	wantResponse(t, r, "run_command", true, "")
	var res wire.RunCommandResult
	if err := json.Unmarshal(r.Data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Action != wire.CommandActionDisplay {
		t.Fatalf("/%s answered %s", name, r.Data)
	}
	return res.Text
}

// Each extension runs in its own folder, as zot's extensions always have:
// `node index.js`, `python3 hello.py` reading a file beside it, and `go
// run .` building the extension's own module, not the session's; and
// hello_ack still tells them the session's directory.
func TestUpstreamExtensionsRunInTheirFolder(t *testing.T) {
	needTools(t, "node", "python3", "go")
	exts := realTemp(t)
	clock := upstreamExt(t, exts, "clock", "", nil)
	hello := upstreamExt(t, exts, "hellopy", "", nil)
	todo := upstreamExt(t, exts, "todo", "", nil)
	// The session's directory is a Go module with a main package of its
	// own: `go run .` in it would build the wrong program.
	cwd := realTemp(t)
	os.WriteFile(filepath.Join(cwd, "go.mod"), []byte("module example.com/user\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, "main.go"), []byte("package main\n\nfunc main() { println(\"the user's program\") }\n"), 0o644)

	p := start(t, offlineGo, "rpc", "--provider", "scripted", "--cwd", cwd, "--ext", clock, "--ext", hello, "--ext", todo)
	if got := displayOf(t, p, "1", "clock", ""); !strings.HasSuffix(got, " UTC in "+clock) {
		t.Errorf("/clock: %q, want it to run in %s", got, clock)
	}
	want := fmt.Sprintf("hello from a file beside the script (running in %s; the session is in %s)", hello, cwd)
	if got := displayOf(t, p, "2", "hellopy", ""); got != want {
		t.Errorf("/hellopy: %q, want %q", got, want)
	}
	if got := displayOf(t, p, "3", "todo", "buy milk"); got != fmt.Sprintf("todo (%s): 1 item(s): buy milk", todo) {
		t.Errorf("/todo: %q", got)
	}
	r, _ := p.call(`{"id":"4","type":"get_extensions"}`)
	var res wire.ExtensionsResult
	json.Unmarshal(r.Data, &res)
	for _, e := range res.Extensions {
		if e.State != "ready" {
			t.Errorf("extension %s is %s: %s", e.Name, e.State, e.Error)
		}
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// An extension that cannot start is reported to the client (ext_notify,
// level error) and on stderr, with the likely cause and the last lines of
// its log; `zot ext doctor` names the cause too.
func TestExtensionStartFailureReported(t *testing.T) {
	needTools(t, "node")
	exts := realTemp(t)
	// The script is not where the manifest says: node fails to find it.
	broken := upstreamExt(t, exts, "clock", "broken", func(m map[string]any) { m["name"] = "broken" })
	if err := os.Rename(filepath.Join(broken, "index.js"), filepath.Join(broken, "main.js")); err != nil {
		t.Fatal(err)
	}
	p := start(t, nil, rpcArgs(t, "--ext", broken)...)
	evs := p.until("ext_notify")
	n := evs[len(evs)-1].(*wire.ExtNotifyEvent)
	if n.Extension != "broken" || n.Level != "error" {
		t.Fatalf("notice: %+v", n)
	}
	// stderr is a pipe of its own: what zot wrote there is all read only
	// once zot has exited.
	p.exit()
	for _, want := range []string{
		"extension broken: not loaded: extension broken exited with status 1",
		"likely cause: index.js is missing from the extension's folder " + broken,
		"last lines of its log:",
		"Cannot find module '" + filepath.Join(broken, "index.js") + "'",
	} {
		if !strings.Contains(n.Message, want) {
			t.Errorf("notice lacks %q:\n%s", want, n.Message)
		}
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
		}
	}

	// A runtime that is not installed.
	missing := upstreamExt(t, exts, "clock", "nonode", func(m map[string]any) {
		m["name"], m["exec"] = "nonode", "node-that-is-not-installed"
	})
	p = start(t, nil, rpcArgs(t, "--ext", missing)...)
	evs = p.until("ext_notify")
	n = evs[len(evs)-1].(*wire.ExtNotifyEvent)
	if n.Level != "error" || !strings.Contains(n.Message, `likely cause: its runtime "node-that-is-not-installed" is not on PATH`) {
		t.Errorf("notice: %+v", n)
	}
	p.exit()

	// zot ext doctor, on the project's extension.
	homeEnv, _ := zotHomeEnv(t)
	env := []string{homeEnv}
	project := realTemp(t)
	upstreamExt(t, filepath.Join(project, ".zot", "extensions"), "clock", "broken", func(m map[string]any) { m["name"] = "broken" })
	os.Rename(filepath.Join(project, ".zot", "extensions", "broken", "index.js"), filepath.Join(project, ".zot", "extensions", "broken", "main.js"))
	out, stderr, code := runExt(t, env, project, "ext", "doctor")
	if code == 0 || !strings.Contains(out+stderr, "index.js is missing from the extension's folder") {
		t.Errorf("doctor: exit %d\n%s%s", code, out, stderr)
	}
}

// guardEvents runs one prompt and returns its events, checking that the
// model was never called: no assistant_start, and the prompt failed as
// blocked at step 1.
func wantBlockedAtStep1(t *testing.T, evs []wire.Event, reason string) {
	t.Helper()
	var types []string
	blocked := false
	for _, ev := range evs {
		types = append(types, ev.Type())
		switch e := ev.(type) {
		case *wire.AssistantStartEvent, *wire.TextDeltaEvent, *wire.AssistantMessageEvent:
			t.Fatalf("the model was called: %v", types)
		case *wire.ErrorEvent:
			blocked = e.Code == wire.CodeBlocked && strings.Contains(e.Message, reason)
		case *wire.TurnStartEvent:
			if e.Step != 1 {
				t.Fatalf("turn_start step %d: %v", e.Step, types)
			}
		}
	}
	if !blocked {
		t.Fatalf("not blocked with %q: %v", reason, types)
	}
}

// The first prompt, sent as the very first line or after a hello, reaches
// the extensions from its first turn_start: a fail-closed guard blocks
// its first model call, and an observer sees turn_start step=1.
func TestFirstPromptReachesExtensions(t *testing.T) {
	needTools(t, "node", "python3")
	exts := realTemp(t)
	guard := upstreamExt(t, exts, "guard", "", nil)
	clock := upstreamExt(t, exts, "clock", "", nil)
	for _, withHello := range []bool{false, true} {
		t.Run(fmt.Sprintf("hello=%v", withHello), func(t *testing.T) {
			var env []string
			if withHello {
				env = []string{"ZOTCORE_RPC_TOKEN=s3cret"}
			}
			p := start(t, env, rpcArgs(t, "--ext", clock, "--ext", guard)...)
			if withHello {
				r, _ := p.call(`{"id":"h","type":"hello","token":"s3cret"}`)
				wantResponse(t, r, "hello", true, "")
			}
			r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
			wantResponse(t, r, "prompt", true, "")
			evs := p.untilDone()
			wantBlockedAtStep1(t, evs, "guard: no model calls here (step 1)")
			// The observer's notice may come after the prompt's done.
			first := ""
			for i := 0; first == ""; i++ {
				if i == len(evs) {
					evs = append(evs, p.until("ext_notify")...)
				}
				if n, ok := evs[i].(*wire.ExtNotifyEvent); ok && strings.HasPrefix(n.Message, "clock saw turn_start") {
					first = n.Message
				}
			}
			if first != "clock saw turn_start step=1" {
				t.Errorf("the observer's first event: %q", first)
			}
		})
	}
}

// A fail-closed guard whose handshake failed (a wrong name in its hello,
// or no hello at all) blocks the first prompt's first model call.
func TestFailedGuardBlocksFirstPrompt(t *testing.T) {
	needTools(t, "python3")
	exts := realTemp(t)
	for _, mode := range []string{"misnamed", "mute"} {
		t.Run(mode, func(t *testing.T) {
			guard := upstreamExt(t, exts, "guard", mode, func(m map[string]any) { m["args"] = []string{"guard.py", mode} })
			p := start(t, nil, rpcArgs(t, "--ext", guard, "--ext-start-timeout", "1s")...)
			r, _ := p.call(`{"id":"1","type":"prompt","message":"hi"}`)
			wantResponse(t, r, "prompt", true, "")
			wantBlockedAtStep1(t, p.untilDone(), "extension guard")
			// And the next prompt too.
			r, _ = p.call(`{"id":"2","type":"prompt","message":"again"}`)
			wantResponse(t, r, "prompt", true, "")
			wantBlockedAtStep1(t, p.untilDone(), "extension guard")
		})
	}
}

// The first prompt of print mode, zot acp and the daemon reaches a
// fail-closed guard too.
func TestFirstPromptGuardedInEveryDoor(t *testing.T) {
	needTools(t, "python3")
	exts := realTemp(t)
	guard := upstreamExt(t, exts, "guard", "", nil)

	stdout, stderr, code := runZot(t, "", nil, "-p", "hi", "--json", "--provider", "scripted", "--cwd", realTemp(t), "--ext", guard)
	if code != 1 {
		t.Fatalf("print mode: exit %d\n%s", code, stderr)
	}
	var evs []wire.Event
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		ev, err := wire.DecodeEvent([]byte(line))
		if err != nil {
			t.Fatalf("print mode: %v: %s", err, line)
		}
		evs = append(evs, ev)
	}
	wantBlockedAtStep1(t, evs, "guard: no model calls here (step 1)")

	p, _, _ := startACP(t, doorDir(t), "--provider", "scripted", "--ext", guard)
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, realTemp(t)), "")
	id := sessionID(t, f)
	f, before := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), "")
	if text := chunkText(before, "agent_message_chunk"); text != "" {
		t.Errorf("the model answered through the guard: %q", text)
	}
	if f.Error == nil || !strings.Contains(string(f.raw), "guard: no model calls here (step 1)") {
		t.Errorf("session/prompt: %s", f.raw)
	}
}

// Over ACP, an extension that cannot start is told to the client as a
// _zot/notify of level error, and an extension's own notify reaches the
// clients the same way.
func TestACPZotNotify(t *testing.T) {
	needTools(t, "node")
	exts := realTemp(t)
	broken := upstreamExt(t, exts, "clock", "broken", func(m map[string]any) { m["name"] = "broken" })
	os.Remove(filepath.Join(broken, "index.js"))
	clock := upstreamExt(t, exts, "clock", "", nil)
	p, _, stderr := startACP(t, doorDir(t), "--provider", "scripted", "--ext", broken, "--ext", clock)
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, realTemp(t)), "")
	id := sessionID(t, f)
	_, before := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), "")
	type notice struct {
		SessionID, Level, Message, Source, Name string
	}
	var got []notice
	var failed, saw bool
	// The observer's notice may come after the prompt's answer.
	for i := 0; !saw; i++ {
		if i == len(before) {
			before = append(before, p.next())
		}
		f := before[i]
		if f.Method != "_zot/notify" {
			continue
		}
		var n notice
		if err := json.Unmarshal(f.Params, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
		if n.SessionID != id || n.Source != "extension" {
			t.Errorf("notice %+v", n)
		}
		failed = failed || n.Name == "broken" && n.Level == "error" && strings.Contains(n.Message, "Cannot find module")
		saw = n.Name == "clock" && n.Level == "info" && n.Message == "clock saw turn_start step=1"
	}
	if !failed {
		t.Errorf("notices: %+v", got)
	}
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(stderr.String(), "extension broken: not loaded") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "likely cause: index.js is missing") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// An extension slower to start than --ext-start-timeout is killed, and
// the error says what to raise; its manifest's start_timeout_ms gives it
// the time it needs.
func TestExtStartTimeout(t *testing.T) {
	needTools(t, "python3")
	exts := realTemp(t)
	slow := upstreamExt(t, exts, "hellopy", "slow", func(m map[string]any) {
		m["exec"], m["args"] = "sh", []string{"-c", "sleep 2; exec python3 hello.py"}
	})
	p := start(t, nil, rpcArgs(t, "--ext", slow, "--ext-start-timeout", "500ms")...)
	evs := p.until("ext_notify")
	n := evs[len(evs)-1].(*wire.ExtNotifyEvent)
	want := `no hello within 500ms; killed (for a slow start, raise "start_timeout_ms" in ` + filepath.Join(slow, "extension.json") + ` or --ext-start-timeout)`
	if n.Level != "error" || !strings.Contains(n.Message, want) {
		t.Errorf("notice: %+v\nwant %s", n, want)
	}
	p.exit()

	upstreamExt(t, exts, "hellopy", "patient", func(m map[string]any) {
		m["exec"], m["args"] = "sh", []string{"-c", "sleep 2; exec python3 hello.py"}
		m["start_timeout_ms"] = 20000
	})
	p = start(t, nil, rpcArgs(t, "--ext", filepath.Join(exts, "patient"), "--ext-start-timeout", "500ms")...)
	if got := displayOf(t, p, "1", "hellopy", ""); !strings.HasPrefix(got, "hello from a file") {
		t.Errorf("/hellopy: %q", got)
	}
	p.exit()

	if _, stderr, code := runZot(t, "", nil, "rpc", "--provider", "scripted", "--ext-start-timeout", "0s"); code != 2 || !strings.Contains(stderr, "--ext-start-timeout must be positive") {
		t.Errorf("--ext-start-timeout 0s: exit %d: %s", code, stderr)
	}
}

// At the end of stdin, the commands read before it are answered as if it
// were open: a slash command runs (its extension started and waited
// for), and get_commands lists the extensions' commands.
func TestRPCEndOfInputAnswersExtensionCommands(t *testing.T) {
	needTools(t, "python3")
	hello := upstreamExt(t, realTemp(t), "hellopy", "", nil)
	for _, input := range []string{
		`{"id":"3","type":"run_command","name":"hellopy"}`,
		`{"id":"1","type":"get_commands"}` + "\n" + `{"id":"3","type":"run_command","name":"hellopy"}`,
	} {
		stdout, stderr, code := runZot(t, input+"\n", nil, rpcArgs(t, "--ext", hello)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		answered := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			r, _, err := wire.DecodeFrame([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			if r != nil {
				id, _ := json.Marshal(r.ID)
				if !r.Success {
					t.Errorf("%s failed: %s", id, line)
				}
				answered[string(id)] = string(r.Data)
			}
		}
		if !strings.Contains(answered[`"3"`], `hello from a file beside the script`) {
			t.Errorf("run_command: %q\nstdout: %s", answered[`"3"`], stdout)
		}
		if strings.Contains(input, "get_commands") && !strings.Contains(answered[`"1"`], `"name":"hellopy"`) {
			t.Errorf("get_commands: %q", answered[`"1"`])
		}
	}
}
