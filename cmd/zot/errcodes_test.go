package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestACPErrorCodes: the engine's refusals reach an ACP client as the
// JSON-RPC code and data.kind of their protocol code, with the field and
// session named: a working directory that does not exist is the client's
// invalid_params about cwd, not a fault of zot's.
func TestACPErrorCodes(t *testing.T) {
	home := doorDir(t)
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted")
	cmd.Env = doorEnv(home)
	stdin, stdout, stderr := startPiped(t, cmd)
	p := newDoorPeer(t, stdin, stdout)
	if f := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	missing := filepath.Join(home, "no", "such", "dir")
	f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, missing))
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["kind"] != "invalid_params" || f.Error.Data["field"] != "cwd" {
		t.Errorf("session/new in a missing directory: %s, want -32602 invalid_params naming cwd", f.raw)
	}
	f = p.call("3", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[{"type":"http","name":"web","url":"ftp://example.invalid/mcp","headers":[]}]}`, home))
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["kind"] != "invalid_params" || f.Error.Data["field"] != "mcpServers[0]" || f.Error.Data["sessionId"] != nil {
		t.Errorf("session/new with an MCP server that is not usable: %s, want -32602 invalid_params naming mcpServers[0] and no session", f.raw)
	}
	f = p.call("4", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
	if f.Error != nil {
		t.Fatalf("session/new: %s", f.raw)
	}
	var opened struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(f.Result, &opened); err != nil {
		t.Fatalf("session/new: %v: %s", err, f.raw)
	}
	f = p.call("5", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":"yolo"}`, opened.SessionID))
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["kind"] != "invalid_params" || f.Error.Data["field"] != "modeId" || f.Error.Data["sessionId"] != opened.SessionID {
		t.Errorf("session/set_mode to a mode zot does not have: %s, want -32602 invalid_params naming modeId and the session", f.raw)
	}
	_ = stdin.Close()
	if err := endOf(t, cmd, stderr); err != nil {
		t.Fatalf("zot acp at the end of stdin: %v\n%s", err, stderr)
	}
}
