package doortest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// unreachable is an MCP server nothing listens for (port 1 of loopback):
// it fails to start at once.
const unreachable = "http://127.0.0.1:1/mcp"

// waitFrame reads d's frames until match takes one.
func waitFrame(t *testing.T, d *door, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		f := d.conn.next(0)
		if f == nil {
			t.Fatalf("the door's output ended before %s", what)
		}
		var v map[string]any
		if err := json.Unmarshal(f, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if match(v) {
			return v
		}
		t.Logf("read %s", f)
	}
}

// TestMCPNoticeInEveryDoor: a notice of a session's MCP server (one that
// failed to start) leaves through the session, so every door tells it
// its own way: ext_notify with source mcp:<server> over zot rpc,
// _zot/notify with source mcp and the server's name over ACP, OnEvent in
// the SDK.
func TestMCPNoticeInEveryDoor(t *testing.T) {
	t.Run("rpc", func(t *testing.T) {
		dir := t.TempDir()
		writeScript(t, dir)
		d := startRPC(t, dir, doorOptions{})
		d.conn.send([]byte(`{"type":"mcp_add","id":"a","servers":[{"name":"gone","url":"` + unreachable + `"}]}`))
		v := waitFrame(t, d, "the notice", func(v map[string]any) bool { return v["type"] == "ext_notify" })
		if v["source"] != "mcp:gone" || v["level"] != "error" || !strings.Contains(v["message"].(string), "gone") {
			t.Errorf("notice %v", v)
		}
		if seq, _ := v["seq"].(float64); seq < 1 {
			t.Errorf("the notice is not stamped: %v", v)
		}
	})
	t.Run("acp", func(t *testing.T) {
		dir := t.TempDir()
		writeScript(t, dir)
		d := startACP(t, dir, doorOptions{})
		d.conn.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`))
		d.conn.send([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + dir + `","mcpServers":[{"type":"http","name":"gone","url":"` + unreachable + `","headers":[]}]}}`))
		v := waitFrame(t, d, "the notice", func(v map[string]any) bool { return v["method"] == "_zot/notify" })
		p, _ := v["params"].(map[string]any)
		if p["source"] != "mcp" || p["name"] != "gone" || p["level"] != "error" || p["sessionId"] == nil {
			t.Errorf("notice %v", v)
		}
	})
	t.Run("sdk", func(t *testing.T) {
		got := make(chan sdk.Event, 4)
		newRuntime(t, `{"turns":[{"steps":[{"text":"x"}]}]}`, func(c *sdk.Config) {
			c.MCPServers = []sdk.MCPServer{{Name: "gone", URL: unreachable}}
			c.MCP.OnEvent = func(ev sdk.Event) { got <- ev }
		})
		select {
		case ev := <-got:
			n, ok := ev.(*wire.ExtNotifyEvent)
			if !ok || n.Source != "mcp:gone" || n.Level != "error" || n.GetSeq() < 1 {
				t.Errorf("notice %#v", ev)
			}
		case <-time.After(guard):
			t.Fatal("no notice")
		}
	})
}

// writeScript gives dir the script.json a door's host plays.
func writeScript(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(`{"turns":[{"steps":[{"text":"x"}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
}
