package main

// What an ACP client's panel requests are refused with, through zot acp.

import (
	"fmt"
	"strings"
	"testing"
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
