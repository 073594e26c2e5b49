package main

// zot's built-in slash commands and extension panels through every door
// that shows them: zot rpc (get_commands, run_command) and zot acp
// (available_commands_update, /name prompts, the _zot/panel/ methods and
// notifications).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestRPCBuiltinCommands: get_commands lists zot's own commands without
// any extension; run_command runs them: /clear empties the transcript,
// /mode switches the mode, /help lists, /compact starts a compaction
// whose events end with done; an unknown command is not_found.
func TestRPCBuiltinCommands(t *testing.T) {
	p := start(t, nil, rpcArgs(t)...)
	r, _ := p.call(`{"id":"1","type":"get_commands"}`)
	var list wire.CommandsResult
	if err := json.Unmarshal(r.Data, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list.Commands {
		names = append(names, c.Name)
		if c.Source != wire.CommandSourceBuiltin {
			t.Errorf("%s: source %q", c.Name, c.Source)
		}
	}
	if got := strings.Join(names, " "); got != "help compact clear model mode reload undo jail unjail skills agents" {
		t.Fatalf("get_commands: %s", r.Data)
	}

	p.send(`{"id":"2","type":"prompt","message":"hello"}`)
	p.response()
	p.untilDone()
	r, evs := p.call(`{"id":"3","type":"run_command","name":"clear"}`)
	wantResponse(t, r, "run_command", true, "")
	if !strings.Contains(string(r.Data), `"action":"display","text":"The conversation was cleared."`) {
		t.Errorf("/clear answered %s", r.Data)
	}
	if d, ok := p.event("ext_display", evs).(*wire.ExtDisplayEvent); !ok || d.Text != "The conversation was cleared." || d.PromptID != wire.StringID("3") {
		t.Errorf("/clear event %+v", d)
	}
	r, _ = p.call(`{"id":"4","type":"get_state"}`)
	if !strings.Contains(string(r.Data), `"message_count":0`) {
		t.Errorf("after /clear: %s", r.Data)
	}
	r, _ = p.call(`{"id":"5","type":"run_command","name":"mode","args":"read_only"}`)
	wantResponse(t, r, "run_command", true, "")
	r, _ = p.call(`{"id":"6","type":"get_state"}`)
	if !strings.Contains(string(r.Data), `"mode":"read_only"`) {
		t.Errorf("after /mode read_only: %s", r.Data)
	}
	r, _ = p.call(`{"id":"7","type":"run_command","name":"help"}`)
	if !strings.Contains(string(r.Data), "/reload: Restart this session's extensions") {
		t.Errorf("/help answered %s", r.Data)
	}
	r, _ = p.call(`{"id":"8","type":"run_command","name":"compact","args":"keep it short"}`)
	wantResponse(t, r, "run_command", true, "")
	if !strings.Contains(string(r.Data), `"action":"compact","text":"keep it short","started":true`) {
		t.Errorf("/compact answered %s", r.Data)
	}
	evs = p.untilDone()
	if last := evs[len(evs)-1]; last.GetPromptID() != wire.StringID("8") {
		t.Errorf("/compact's done carries %v", last.GetPromptID())
	}
	r, _ = p.call(`{"id":"9","type":"run_command","name":"nope"}`)
	wantResponse(t, r, "run_command", false, "not_found")
	p.exit()
}

// untilMethod returns the first frame of method among seen (frames
// already read), else reads frames up to it.
func (p *acpPeer) untilMethod(method string, seen ...doorFrame) doorFrame {
	p.t.Helper()
	for _, f := range seen {
		if f.Method == method {
			return f
		}
	}
	for {
		if f := p.next(); f.Method == method {
			return f
		}
	}
}

// TestACPPanels: an extension's panel reaches an ACP client as
// _zot/panel/opened; the client's keys (_zot/panel/key) redraw it
// (_zot/panel/rendered) and _zot/panel/close closes it
// (_zot/panel/closed); a key to a closed panel is invalid_params. Every
// frame is checked against the schemas.
func TestACPPanels(t *testing.T) {
	dir := t.TempDir()
	folder := pyExtension(t, dir, "py", "ok")
	p, _, stderr := startACP(t, doorDir(t), "--provider", "scripted", "--permission", "allow", "--ext", folder)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")
	id := sessionID(t, f)

	f, before := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/hello-py panel"}]}`, id), "")
	if f.Error != nil {
		t.Fatalf("/hello-py panel: %s\n%s", f.raw, stderr)
	}
	var opened doorFrame
	for _, b := range before {
		if b.Method == "_zot/panel/opened" {
			opened = b
		}
	}
	if !strings.Contains(string(opened.Params), `"panel":{"panelId":"p1","extension":"py","title":"Panel","lines":["one"],"footer":"esc"}`) || !strings.Contains(string(opened.Params), id) {
		t.Fatalf("no _zot/panel/opened before the answer: %s\n%v", opened.Params, updateKinds(before))
	}

	// The extension redraws and closes on its own time: the notification
	// may come before the call's answer or after it.
	f, before = p.call("4", "_zot/panel/key", fmt.Sprintf(`{"sessionId":%q,"panelId":"p1","key":"rune","text":"x"}`, id), "")
	if f.Error != nil {
		t.Fatalf("_zot/panel/key: %s", f.raw)
	}
	r := p.untilMethod("_zot/panel/rendered", before...)
	if !strings.Contains(string(r.Params), `"lines":["key rune x"]`) {
		t.Errorf("rendered %s", r.Params)
	}
	f, before = p.call("5", "_zot/panel/close", fmt.Sprintf(`{"sessionId":%q,"panelId":"p1"}`, id), "")
	if f.Error != nil {
		t.Fatalf("_zot/panel/close: %s", f.raw)
	}
	c := p.untilMethod("_zot/panel/closed", before...)
	if !strings.Contains(string(c.Params), `"panelId":"p1","extension":"py"`) {
		t.Errorf("closed %s", c.Params)
	}
	f, _ = p.call("6", "_zot/panel/key", fmt.Sprintf(`{"sessionId":%q,"panelId":"p1","key":"down"}`, id), "")
	if f.Error == nil || f.Error.Data["kind"] != "invalid_params" {
		t.Errorf("a key to a closed panel: %s", f.raw)
	}
}

// doorTable returns the table of "What each door shows" in a doc.
func doorTable(t *testing.T, doc string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "| what the user sees |")
	if !ok {
		t.Fatalf("%s has no table of what each door shows", doc)
	}
	table, _, _ := strings.Cut(rest, "\n\n")
	return table
}

// TestDoorTableIsOne: docs/rpc.md and docs/daemon.md show one table of
// what each door shows, word for word.
func TestDoorTableIsOne(t *testing.T) {
	if a, b := doorTable(t, "rpc.md"), doorTable(t, "daemon.md"); a != b {
		t.Errorf("the tables of docs/rpc.md and docs/daemon.md differ:\n%s\n---\n%s", a, b)
	}
}
