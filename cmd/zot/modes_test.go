package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRPCSetModeReadOnly: set_mode read_only over zot rpc refuses the
// next write without asking; get_state tells the mode; set_mode ask
// then asks the client (zot rpc can always answer); a mode that is not
// one is invalid_params.
func TestRPCSetModeReadOnly(t *testing.T) {
	dir := t.TempDir()
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", approvalScript(t))
	f := &flow{p: p}
	resp := f.send(`{"id":"m1","type":"set_mode","mode":"read_only"}`)
	wantResponse(t, resp, "set_mode", true, "")
	if got := string(resp.Data); !strings.Contains(got, `"mode":"read_only"`) || !strings.Contains(got, `"modes":["ask","accept_edits","auto","read_only"]`) {
		t.Errorf("set_mode answer %s", got)
	}
	resp = f.send(`{"id":"s","type":"get_state"}`)
	if !strings.Contains(string(resp.Data), `"mode":"read_only"`) {
		t.Errorf("get_state %s", resp.Data)
	}
	resp = f.send(`{"id":"1","type":"prompt","message":"go"}`)
	wantResponse(t, resp, "prompt", true, "")
	evs := f.until("done")
	if slices.Contains(types(evs), "permission_request") {
		t.Errorf("read_only asked the client: %v", types(evs))
	}
	res := toolResults(evs)
	if len(res) != 3 || !res[0].IsError || !strings.Contains(string(res[0].AppendJSON(nil)), "read-only mode") {
		t.Errorf("results in read_only: %d, first %s", len(res), res[0].AppendJSON(nil))
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Error("read_only let the write run")
	}

	resp = f.send(`{"id":"m2","type":"set_mode","mode":"ask"}`)
	wantResponse(t, resp, "set_mode", true, "")
	resp = f.send(`{"id":"2","type":"prompt","message":"again"}`)
	wantResponse(t, resp, "prompt", true, "")
	pr, _ := f.nextRequest(t, `"2"`)
	if pr.Tool != "write" {
		t.Errorf("asked about %s, want write", pr.Tool)
	}
	wantResponse(t, f.answer("a1", pr.RequestID, "allow_always", ""), "answer_permission", true, "")
	pr, _ = f.nextRequest(t, `"2"`)
	wantResponse(t, f.answer("a2", pr.RequestID, "reject", "no"), "answer_permission", true, "")
	f.until("done")
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err != nil {
		t.Errorf("the allowed write did not run: %v", err)
	}
	resp = f.send(`{"id":"m3","type":"set_mode","mode":"sometimes"}`)
	wantResponse(t, resp, "set_mode", false, "invalid_params")
	p.exit()
}

// TestPermissionFlagsInEveryDoor: --permission deny keeps zot rpc in
// read_only (set_mode cannot leave it), and zot -p refuses the write;
// --approve contradicts --permission allow.
func TestPermissionFlagsInEveryDoor(t *testing.T) {
	dir := t.TempDir()
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", approvalScript(t), "--permission", "deny")
	f := &flow{p: p}
	resp := f.send(`{"id":"m","type":"set_mode","mode":"auto"}`)
	wantResponse(t, resp, "set_mode", false, "invalid_params")
	if !strings.Contains(resp.Error, "--permission deny") {
		t.Errorf("refusal says %q", resp.Error)
	}
	resp = f.send(`{"id":"s","type":"get_state"}`)
	if !strings.Contains(string(resp.Data), `"mode":"read_only"`) {
		t.Errorf("get_state %s", resp.Data)
	}
	p.exit()

	out, stderr, code := runZot(t, "", nil, "-p", "go", "--json", "--provider", "scripted", "--cwd", dir, "--script", approvalScript(t), "--permission", "deny")
	if code != 0 {
		t.Fatalf("zot -p --permission deny: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "read-only mode") {
		t.Errorf("zot -p --permission deny did not refuse: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Error("zot -p --permission deny let the write run")
	}

	bad := start(t, nil, rpcArgs(t, "--approve", "--permission", "allow")...)
	if code := bad.wait(); code != 2 {
		t.Errorf("--approve --permission allow: exit %d, want 2 (usage)", code)
	}
}

// TestACPPermissionFlags: zot acp takes --approve (mode ask) and
// --permission deny (read_only, the only mode offered, and a write is
// refused without asking the client).
func TestACPPermissionFlags(t *testing.T) {
	p, _, _ := startACP(t, doorDir(t), "--provider", "scripted", "--approve")
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")
	if !strings.Contains(string(f.Result), `"currentModeId":"ask"`) {
		t.Errorf("zot acp --approve: %s", f.Result)
	}

	work := t.TempDir()
	d, _, stderr := startACP(t, doorDir(t), "--provider", "scripted", "--script", approvalScript(t), "--permission", "deny")
	d.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ = d.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	if !strings.Contains(string(f.Result), `"currentModeId":"read_only","availableModes":[{"id":"read_only","name":"Read only","description":"Refuse file changes and commands"}]`) {
		t.Errorf("zot acp --permission deny: %s", f.Result)
	}
	id := sessionID(t, f)
	f, before := d.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "")
	if f.Error != nil {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	for _, b := range before {
		if b.Method == "session/request_permission" {
			t.Error("read_only asked the client")
		}
	}
	if _, err := os.Stat(filepath.Join(work, "a.txt")); err == nil {
		t.Error("--permission deny let the write run")
	}
}
