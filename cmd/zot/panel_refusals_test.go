package main

// What an ACP client's panel requests are refused with, through zot acp.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestACPPanelKeyOutsideTheSchema: a key that is not one of the schema's
// panel keys is refused with invalid_params naming the key, and never
// reaches the extension (which would redraw its panel with it); the
// panel still takes a real key afterwards.
func TestACPPanelKeyOutsideTheSchema(t *testing.T) {
	folder := pyExtension(t, t.TempDir(), "py", "ok")
	p, _, stderr := startACP(t, doorDir(t), "--provider", "scripted", "--permission", "allow", "--ext", folder)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")
	id := sessionID(t, f)
	if f, _ = p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/hello-py panel"}]}`, id), ""); f.Error != nil {
		t.Fatalf("/hello-py panel: %s\n%s", f.raw, stderr)
	}
	for i, key := range []string{"bogus", "DOWN", ""} {
		p.sendBad(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_zot/panel/key","params":{"sessionId":%q,"panelId":"p1","key":%q}}`, 10+i, id, key))
		f, before := p.answerToBad(fmt.Sprint(10 + i))
		if f.Error == nil || f.Error.Data["kind"] != "invalid_params" || f.Error.Data["field"] != "key" {
			t.Errorf("key %q: %s, want invalid_params about key", key, f.raw)
		}
		for _, b := range before {
			if b.Method == "_zot/panel/rendered" {
				t.Errorf("key %q reached the extension: %s", key, b.Params)
			}
		}
	}
	f, before := p.call("20", "_zot/panel/key", fmt.Sprintf(`{"sessionId":%q,"panelId":"p1","key":"down"}`, id), "")
	if f.Error != nil {
		t.Fatalf("a real key after the refused ones: %s", f.raw)
	}
	if r := p.untilMethod("_zot/panel/rendered", before...); !strings.Contains(string(r.Params), `"lines":["key down "]`) {
		t.Errorf("rendered %s", r.Params)
	}
}

// answerToBad reads up to the answer to id, a request sent with sendBad,
// and returns it with the frames before it.
func (p *acpPeer) answerToBad(id string) (doorFrame, []doorFrame) {
	p.t.Helper()
	var before []doorFrame
	for {
		f := p.read()
		if f.Method == "" && string(f.ID) == id {
			return f, before
		}
		before = append(before, f)
	}
}

// stuckPanelExtension writes an extension that opens panel p1 when its
// command /stuck runs, then never reads its input again.
func stuckPanelExtension(t *testing.T) string {
	t.Helper()
	folder := filepath.Join(t.TempDir(), "stuck")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `import json, sys, time
def emit(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
emit({"type": "hello", "name": "stuck", "version": "1.0.0", "capabilities": ["commands"]})
emit({"type": "register_command", "name": "stuck", "description": "opens a panel, then reads no more"})
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "command_invoked":
        emit({"type": "command_response", "id": m["id"], "action": "open_panel", "open_panel": {"id": "p1", "lines": ["x"]}})
        time.sleep(3600)
`
	if err := os.WriteFile(filepath.Join(folder, "ext.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf(`{"name":"stuck","exec":"python3","args":[%q]}`, filepath.Join(folder, "ext.py"))
	if err := os.WriteFile(filepath.Join(folder, "extension.json"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// TestRPCPanelKeysToAnExtensionThatDoesNotRead: keys sent to the panel
// of an extension that stopped reading its input are refused with
// extension_error once its input holds its backlog, instead of piling
// up in zot's memory without bound; zot keeps serving.
func TestRPCPanelKeysToAnExtensionThatDoesNotRead(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--ext", stuckPanelExtension(t))...)
	r, _ := p.call(`{"id":"c","type":"run_command","name":"stuck"}`)
	wantResponse(t, r, "run_command", true, "")
	text := strings.Repeat("k", 1000)
	const keys = 3000
	go func() {
		for i := range keys {
			p.send(fmt.Sprintf(`{"id":"k%d","type":"panel_key","panel_id":"p1","key":"rune","text":%q}`, i, text))
		}
		p.send(`{"id":"s","type":"get_state"}`)
	}()
	refused := 0
	for {
		f := p.next()
		if f.resp == nil {
			continue
		}
		if f.resp.ID == wire.StringID("s") {
			wantResponse(t, f.resp, "get_state", true, "")
			break
		}
		if !f.resp.Success {
			wantResponse(t, f.resp, "panel_key", false, wire.CodeExtensionError)
			refused++
		}
	}
	if refused == 0 {
		t.Fatalf("all %d keys were taken for an extension that reads none", keys)
	}
	if refused == keys {
		t.Errorf("every key was refused, even the first")
	}
}
