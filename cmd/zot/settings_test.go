package main

// Tests of the settings through the real binary: permission rules in
// config.json and .zot/settings.json over zot rpc and zot acp, "allow
// always" kept as a rule and honoured by the next session, settings files
// that do not parse, and zot config. Every test has a zot home of its own
// (ZOT_HOME in a temp folder).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// bashScript is a script whose one prompt runs each command with bash,
// one step each, then answers "done".
func bashScript(t *testing.T, commands ...string) string {
	t.Helper()
	var steps []any
	for i, c := range commands {
		steps = append(steps, map[string]any{"tool_calls": []any{map[string]any{"id": fmt.Sprintf("b%d", i+1), "name": "bash", "args": map[string]any{"command": c}}}})
	}
	steps = append(steps, map[string]any{"text": "done"})
	return script(t, map[string]any{"turns": []any{map[string]any{"steps": steps}}})
}

// fakeGo puts a `go` on PATH that writes go.ran in its working folder
// (and nothing else), and returns the PATH to give zot.
func fakeGo(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\necho \"$@\" >> go.ran\necho ok\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// settingsWork is a working folder holding a folder x (for rm -rf x to
// remove) and, when project is not empty, .zot/settings.json.
func settingsWork(t *testing.T, project string) string {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	if err := os.MkdirAll(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if project != "" {
		writeFile(t, filepath.Join(dir, ".zot", "settings.json"), project)
	}
	return dir
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestPermissionRulesRPC: a config.json rule that allows bash for
// `go test *` only runs `go test ./...` without asking while `rm -rf x`
// is still asked (and rejected); a deny rule in the project's
// .zot/settings.json refuses it without asking, even in an untrusted
// folder, while that file's allow rule counts only once the folder is
// trusted.
func TestPermissionRulesRPC(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "config.json"), `{"permissions": {"allow": ["bash(go test *)"]}}`)
	work := settingsWork(t, "")
	env := []string{"ZOT_HOME=" + home, fakeGo(t)}
	s := bashScript(t, "go test ./...", "rm -rf x")

	p := start(t, env, "rpc", "--provider", "scripted", "--script", s, "--cwd", work, "--approve")
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, evs := f.nextRequest(t, `"1"`)
	if pr.Tool != "bash" || !strings.Contains(string(pr.Args), "rm -rf x") {
		t.Fatalf("the first request is %s, want the rm", pr.AppendJSON(nil))
	}
	if pr.Rule != "bash(rm *)" {
		t.Errorf("the request's rule is %q, want bash(rm *)", pr.Rule)
	}
	if res := toolResults(evs); len(res) != 1 || res[0].IsError || res[0].ID != "b1" {
		t.Fatalf("go test's result before the rm's request: %v", res)
	}
	if !exists(filepath.Join(work, "go.ran")) {
		t.Fatal("go test did not run")
	}
	wantResponse(t, f.answer("2", pr.RequestID, "reject", ""), "answer_permission", true, "")
	evs = f.until("done")
	if res := toolResults(evs); len(res) != 1 || !res[0].IsError || !exists(filepath.Join(work, "x")) {
		t.Fatalf("the rejected rm: %v, x there: %v", res, exists(filepath.Join(work, "x")))
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}

	// The project's deny rule refuses rm unasked in an untrusted folder;
	// its allow rule for echo is not applied there.
	writeFile(t, filepath.Join(work, ".zot", "settings.json"), `{"permissions": {"deny": ["bash(rm *)"], "allow": ["bash(echo *)"]}}`)
	s = bashScript(t, "go test ./cmd/...", "rm -rf x", "echo hi")
	p = start(t, env, "rpc", "--provider", "scripted", "--script", s, "--cwd", work, "--approve")
	f = &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, evs = f.nextRequest(t, `"1"`)
	if !strings.Contains(string(pr.Args), "echo hi") {
		t.Fatalf("the request is %s, want only echo's", pr.AppendJSON(nil))
	}
	res := toolResults(evs)
	if len(res) != 2 || res[0].IsError || !res[1].IsError || !strings.Contains(string(res[1].AppendJSON(nil)), "denied by the permission rule bash(rm *) in "+filepath.Join(work, ".zot", "settings.json")) {
		t.Fatalf("results %s", resultsJSON(res))
	}
	var notice *wire.ExtNotifyEvent
	for _, e := range evs {
		if n, ok := e.(*wire.ExtNotifyEvent); ok && n.Source == "settings" {
			notice = n
		}
	}
	if notice == nil || !strings.Contains(notice.Message, "not applying the allow rules of "+filepath.Join(work, ".zot", "settings.json")) || !strings.Contains(notice.Message, "zot trust") {
		t.Errorf("no settings notice about the untrusted allow rules: %v", notice)
	}
	wantResponse(t, f.answer("2", pr.RequestID, "reject", ""), "answer_permission", true, "")
	f.until("done")
	p.exit()
	if !exists(filepath.Join(work, "x")) {
		t.Fatal("x was removed")
	}

	// Trusted, the project's allow rule runs echo without asking.
	if out, errOut, code := runExt(t, env, work, "trust"); code != 0 {
		t.Fatalf("zot trust: %s %s", out, errOut)
	}
	p = start(t, env, "rpc", "--provider", "scripted", "--script", bashScript(t, "echo hi"), "--cwd", work, "--approve")
	f = &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	evs = f.until("done")
	if slices.Contains(types(evs), "permission_request") {
		t.Errorf("echo was asked for in a trusted folder: %v", types(evs))
	}
	if res := toolResults(evs); len(res) != 1 || res[0].IsError {
		t.Errorf("echo: %s", resultsJSON(res))
	}
}

func resultsJSON(res []*wire.ToolResultEvent) string {
	var b strings.Builder
	for _, r := range res {
		b.Write(r.AppendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}

// acpPrompt opens a session of p in work and prompts it, answering each
// permission request with answer(request params) as an option id. It
// returns the permission requests' params and the prompt's answer.
func acpPrompt(t *testing.T, p *acpPeer, work string, answer func(json.RawMessage) string) ([]json.RawMessage, doorFrame) {
	t.Helper()
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	var asked []json.RawMessage
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == "3" {
			return asked, f
		}
		if f.Method == "session/request_permission" {
			asked = append(asked, f.Params)
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, f.ID, answer(f.Params)))
		}
	}
}

// startACPEnv starts zot acp with the environment env.
func startACPEnv(t *testing.T, env []string, args ...string) *acpProc {
	t.Helper()
	cmd := exec.Command(zotBin, append([]string{"acp"}, args...)...)
	cmd.Env = env
	stdin, stdout, stderr := startPiped(t, cmd)
	return &acpProc{cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, peer: checked(t, newDoorPeer(t, stdin, stdout))}
}

// TestPermissionRulesACP: over zot acp (whose sessions ask by default) a
// rule that allows `go test *` runs go test without
// session/request_permission, and rm -rf x is still asked.
func TestPermissionRulesACP(t *testing.T) {
	home := doorDir(t)
	writeFile(t, filepath.Join(home, "config.json"), `{"permissions": {"allow": ["bash(go test *)"]}}`)
	work := settingsWork(t, "")
	a := startACPEnv(t, doorEnv(home, fakeGo(t)), "--provider", "scripted", "--script", bashScript(t, "go test ./...", "rm -rf x"))
	asked, f := acpPrompt(t, a.peer, work, func(json.RawMessage) string { return "reject_once" })
	if f.Error != nil {
		t.Fatalf("prompt: %s\n%s", f.raw, a.stderr)
	}
	if len(asked) != 1 || !strings.Contains(string(asked[0]), "rm -rf x") {
		t.Fatalf("asked %s, want only the rm", asked)
	}
	if !strings.Contains(string(asked[0]), `"optionId":"allow_always_folder"`) || !strings.Contains(string(asked[0]), "Always allow bash(rm *) in this folder") {
		t.Errorf("no option to keep the answer as a rule: %s", asked[0])
	}
	if !exists(filepath.Join(work, "go.ran")) {
		t.Errorf("go test did not run\n%s", a.stderr)
	}
	if !exists(filepath.Join(work, "x")) {
		t.Error("x was removed")
	}
}

// TestAllowAlwaysSavedRPC: an allow_always answer with save keeps the
// request's rule in config.json for the folder; a new session in that
// folder runs the matching command without asking, asks for another, and
// a session in another folder still asks. A rule the answer names must
// match the call.
func TestAllowAlwaysSavedRPC(t *testing.T) {
	home := t.TempDir()
	work := settingsWork(t, "")
	env := []string{"ZOT_HOME=" + home, fakeGo(t)}
	p := start(t, env, "rpc", "--provider", "scripted", "--script", bashScript(t, "go test ./...", "go test -run X ./..."), "--cwd", work, "--approve")
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, _ := f.nextRequest(t, `"1"`)
	if pr.Rule != "bash(go test *)" {
		t.Fatalf("rule %q, want bash(go test *)", pr.Rule)
	}
	wantResponse(t, f.send(`{"id":"2","type":"answer_permission","request_id":"`+pr.RequestID+`","decision":"allow_always","save":"project","rule":"bash(make *)"}`), "answer_permission", false, wire.CodeInvalidParams)
	wantResponse(t, f.send(`{"id":"3","type":"answer_permission","request_id":"`+pr.RequestID+`","decision":"allow_always","save":"project"}`), "answer_permission", true, "")
	evs := f.until("done")
	if slices.Contains(types(evs), "permission_request") {
		t.Errorf("the second go test was asked for after the rule was saved: %v", types(evs))
	}
	p.exit()
	data, err := os.ReadFile(filepath.Join(home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Folders map[string]struct {
			Permissions struct{ Allow []string }
		}
	}
	if err := json.Unmarshal(data, &c); err != nil || !slices.Equal(c.Folders[work].Permissions.Allow, []string{"bash(go test *)"}) {
		t.Fatalf("config.json after the answer: %s (%v)", data, err)
	}

	// A new session in the folder honours it; other commands still ask.
	p = start(t, env, "rpc", "--provider", "scripted", "--script", bashScript(t, "go test ./cmd/zot/", "go build ./..."), "--cwd", work, "--approve")
	f = &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, evs = f.nextRequest(t, `"1"`)
	if !strings.Contains(string(pr.Args), "go build") || len(toolResults(evs)) != 1 {
		t.Fatalf("the new session asked for %s after %d results, want go build after go test's", pr.AppendJSON(nil), len(toolResults(evs)))
	}
	wantResponse(t, f.answer("2", pr.RequestID, "reject", ""), "answer_permission", true, "")
	f.until("done")
	p.exit()

	other := settingsWork(t, "")
	p = start(t, env, "rpc", "--provider", "scripted", "--script", bashScript(t, "go test ./..."), "--cwd", other, "--approve")
	f = &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, _ = f.nextRequest(t, `"1"`)
	wantResponse(t, f.answer("2", pr.RequestID, "reject", ""), "answer_permission", true, "")
	f.until("done")
	p.exit()
}

// TestAllowAlwaysSavedACP: the ACP option that keeps "allow always" as a
// rule for the folder writes it to config.json, and the next zot acp's
// session in that folder runs the command without asking.
func TestAllowAlwaysSavedACP(t *testing.T) {
	home := doorDir(t)
	work := settingsWork(t, "")
	env := doorEnv(home, fakeGo(t))
	a := startACPEnv(t, env, "--provider", "scripted", "--script", bashScript(t, "go vet ./..."))
	asked, f := acpPrompt(t, a.peer, work, func(json.RawMessage) string { return "allow_always_folder" })
	if f.Error != nil || len(asked) != 1 {
		t.Fatalf("prompt: %s, asked %d\n%s", f.raw, len(asked), a.stderr)
	}
	a.stdin.Close()
	if err := endOf(t, a.cmd, a.stderr); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(home, "config.json"))
	if !strings.Contains(string(data), `"bash(go vet *)"`) || !strings.Contains(string(data), work) {
		t.Fatalf("config.json: %s", data)
	}
	a = startACPEnv(t, env, "--provider", "scripted", "--script", bashScript(t, "go vet ./cmd/..."))
	asked, f = acpPrompt(t, a.peer, work, func(json.RawMessage) string { return "reject_once" })
	if f.Error != nil || len(asked) != 0 {
		t.Fatalf("the new session asked %d times: %s", len(asked), asked)
	}
	if ran, _ := os.ReadFile(filepath.Join(work, "go.ran")); strings.Count(string(ran), "vet") != 2 {
		t.Errorf("go vet ran %q", ran)
	}
}

// TestSettingsBadJSON: a config.json or .zot/settings.json that does not
// parse is named with its line and column on one line, never written
// over, and zot goes on: a prompt runs (without the file's rules), zot
// config refuses the file, and an answer that would save a rule into it
// fails with settings_error while its request still waits.
func TestSettingsBadJSON(t *testing.T) {
	home := t.TempDir()
	bad := "{\n  \"model\": \"x\",\n  oops\n}\n"
	cfg := filepath.Join(home, "config.json")
	writeFile(t, cfg, bad)
	work := settingsWork(t, "{\"permissions\": {\"deny\": [\"bash(rm *)\"]},}")
	env := []string{"ZOT_HOME=" + home, fakeGo(t)}
	proj := filepath.Join(work, ".zot", "settings.json")

	out, errOut, code := runExt(t, env, work, "-p", "hi", "--provider", "scripted")
	if code != 0 || out == "" {
		t.Fatalf("zot -p with bad settings: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{cfg + ":3:3: not valid JSON", proj + ":1:42: not valid JSON"} {
		if n := strings.Count(errOut, want); n != 1 {
			t.Errorf("stderr names %q %d times, want once:\n%s", want, n, errOut)
		}
	}
	for _, args := range [][]string{{"config", "get", "model"}, {"config", "list"}, {"config", "set", "model", "y"}, {"config", "add", "permissions.allow", "read"}} {
		_, errOut, code := runExt(t, env, work, args...)
		if code != 1 || !strings.Contains(errOut, cfg+":3:3: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("zot %v: exit %d, stderr %q", args, code, errOut)
		}
	}
	_, errOut, code = runExt(t, env, work, "config", "add", "--project", "permissions.deny", "read(.env)")
	if code != 1 || !strings.Contains(errOut, proj+":1:42: ") {
		t.Errorf("zot config add --project: exit %d, stderr %q", code, errOut)
	}

	p := start(t, env, "rpc", "--provider", "scripted", "--script", bashScript(t, "go test ./..."), "--cwd", work, "--approve")
	f := &flow{p: p}
	wantResponse(t, f.send(`{"id":"1","type":"prompt","message":"go"}`), "prompt", true, "")
	pr, _ := f.nextRequest(t, `"1"`)
	resp := f.send(`{"id":"2","type":"answer_permission","request_id":"` + pr.RequestID + `","decision":"allow_always","save":"everywhere"}`)
	wantResponse(t, resp, "answer_permission", false, wire.CodeSettingsError)
	if !strings.Contains(resp.Error, cfg+":3:3: ") {
		t.Errorf("the refusal %q does not name the file and position", resp.Error)
	}
	wantResponse(t, f.answer("3", pr.RequestID, "allow_once", ""), "answer_permission", true, "")
	if res := toolResults(f.until("done")); len(res) != 1 || res[0].IsError {
		t.Errorf("go test after allow_once: %s", resultsJSON(res))
	}
	p.exit()

	// Over ACP the session tells its client too, as a _zot/notify of
	// source settings, and serves on.
	a := startACPEnv(t, doorEnv(home, fakeGo(t)), "--provider", "scripted", "--script", bashScript(t, "go test ./..."))
	if f, _ := a.peer.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	a.peer.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, work))
	answered, told := false, false
	for !answered || !told {
		f := a.peer.next() // fails the test when nothing comes in time
		switch {
		case f.Method == "" && string(f.ID) == "2":
			sessionID(t, f)
			answered = true
		case f.Method == "_zot/notify" && strings.Contains(f.raw, `"source":"settings"`) && strings.Contains(f.raw, "config.json:3:3: "):
			told = true
		}
	}

	if data, _ := os.ReadFile(cfg); string(data) != bad {
		t.Errorf("config.json was written over: %q", data)
	}
	if data, _ := os.ReadFile(proj); string(data) != "{\"permissions\": {\"deny\": [\"bash(rm *)\"]},}" {
		t.Errorf("settings.json was written over: %q", data)
	}
}

// TestConfigCommand: zot config set, get, add, remove, unset and list
// (text and --json), for every folder, --folder and --project; bad keys
// and values are usage errors. The remembered provider and model are
// what a run uses when no flag names them, flags win, and a one-shot run
// writes nothing.
func TestConfigCommand(t *testing.T) {
	home := t.TempDir()
	work := settingsWork(t, "")
	env := []string{"ZOT_HOME=" + home}
	run := func(wantCode int, args ...string) string {
		t.Helper()
		out, errOut, code := runExt(t, env, work, args...)
		if code != wantCode {
			t.Fatalf("zot %v: exit %d, want %d\n%s%s", args, code, wantCode, out, errOut)
		}
		return out
	}
	// A one-shot run in a fresh home writes no config.json.
	run(0, "-p", "hi", "--provider", "scripted")
	if exists(filepath.Join(home, "config.json")) {
		t.Fatal("zot -p wrote config.json")
	}
	run(1, "config", "get", "model")
	if out := run(0, "config", "get", "model", "--json"); strings.TrimSpace(out) != "null" {
		t.Errorf("get --json of an unset key: %q", out)
	}
	run(0, "config", "set", "provider", "scripted")
	run(0, "config", "set", "model", "scripted-2")
	run(0, "config", "set", "mode", "accept_edits")
	run(0, "config", "set", "permissions.allow", "Bash(go test *)", "read")
	run(0, "config", "add", "permissions.allow", "edit(src/**)", "read")
	run(0, "config", "remove", "permissions.allow", "read")
	run(0, "config", "add", "--folder", ".", "permissions.deny", "bash(rm *)")
	run(0, "config", "add", "--project", "permissions.deny", "read(.env)")
	if out := run(0, "config", "get", "permissions.allow"); out != "bash(go test *)\nedit(src/**)\n" {
		t.Errorf("get permissions.allow: %q", out)
	}
	if out := run(0, "config", "get", "mode"); out != "accept_edits\n" {
		t.Errorf("get mode: %q", out)
	}
	out := run(0, "config", "list")
	for _, want := range []string{"provider = scripted\n", "model = scripted-2\n", "permissions.allow = bash(go test *)\n", "folders." + work + ".permissions.deny = bash(rm *)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	var all map[string]any
	if err := json.Unmarshal([]byte(run(0, "config", "list", "--json")), &all); err != nil || all["mode"] != "accept_edits" {
		t.Errorf("list --json: %v %v", all, err)
	}
	if out := run(0, "config", "list", "--project"); out != "permissions.deny = read(.env)\n" {
		t.Errorf("list --project: %q", out)
	}
	if out := run(0, "config", "get", "--folder", work, "permissions.deny"); out != "bash(rm *)\n" {
		t.Errorf("get --folder: %q", out)
	}
	run(2, "config", "set", "mode", "yolo")
	run(2, "config", "set", "provider", "nope")
	run(2, "config", "set", "color", "red")
	run(2, "config", "add", "permissions.deny", "bash(")
	run(2, "config", "set", "--project", "model", "x")
	before, _ := os.ReadFile(filepath.Join(home, "config.json"))

	// The remembered provider and model are used without flags (zot -p
	// would need an Anthropic key otherwise); a flag wins.
	run(0, "-p", "hi")
	p := start(t, env, "rpc", "--cwd", work)
	resp := (&flow{p: p}).send(`{"id":"1","type":"get_state"}`)
	if !strings.Contains(string(resp.Data), `"model":"scripted-2"`) {
		t.Errorf("zot rpc without flags: state %s, want the remembered model", resp.Data)
	}
	p.exit()
	if _, errOut, code := runExt(t, env, work, "-p", "hi", "--provider", "anthropic"); code != 1 || !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
		t.Errorf("--provider anthropic did not win over the remembered provider: exit %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(home, "config.json")); string(after) != string(before) {
		t.Errorf("a one-shot run changed config.json:\n%s\n%s", before, after)
	}
	run(0, "config", "unset", "model")
	run(0, "config", "unset", "provider")
	run(1, "config", "get", "provider")
}

// TestPermissionRuleNotWidenedByExpansion: an allow rule for `go test *`
// never runs without asking a line that starts with go test but makes
// bash run something else through an expansion the rule cannot judge:
// ANSI-C quoting that hides a `;`, a prompt expansion of a
// value holding a command substitution (`${x@P}`), an array subscript
// evaluated as arithmetic (`${y[x]}`), the old arithmetic `$[x]`. Each
// is asked for, and once rejected it has run nothing.
func TestPermissionRuleNotWidenedByExpansion(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "config.json"), `{"permissions": {"allow": ["bash(go test *)"]}}`)
	work := settingsWork(t, "")
	env := []string{"ZOT_HOME=" + home, fakeGo(t)}
	lines := []string{
		`go test $'\'' ; touch pwn1 #'`,
		`go test ${x:='$(touch pwn2)'} ${x@P}`,
		`go test ${x:='a[$(touch pwn3)]'} ${y[x]}`,
		`go test ${x:='a[$(touch pwn4)]'} $[x]`,
	}
	p := start(t, env, "rpc", "--provider", "scripted", "--script", bashScript(t, lines...), "--cwd", work, "--approve")
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "prompt", true, "")
	asked := 0
	for n := 2; ; n++ {
		r := p.next()
		if r.resp != nil {
			continue // the answers to our answer_permission lines
		}
		if pr, ok := r.ev.(*wire.PermissionRequestEvent); ok {
			asked++
			p.send(fmt.Sprintf(`{"id":"%d","type":"answer_permission","request_id":%q,"decision":"reject"}`, n, pr.RequestID))
		}
		if r.ev.Type() == "done" {
			break
		}
	}
	p.exit()
	if asked != len(lines) {
		t.Errorf("%d of the %d lines were asked for", asked, len(lines))
	}
	for i := range lines {
		if name := fmt.Sprintf("pwn%d", i+1); exists(filepath.Join(work, name)) {
			t.Errorf("%s ran unasked: %s", lines[i], name)
		}
	}
}
