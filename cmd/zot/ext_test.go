package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// pyExtension writes, under dir, the folder of the Python test extension
// of package exthost in mode, and returns the folder.
func pyExtension(t *testing.T, dir, name, mode string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "internal", "exthost", "testdata", "py", "ext.py"))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": name, "exec": "python3", "args": []string{script, mode, name}})
	if err := os.WriteFile(filepath.Join(folder, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// call sends a command and reads up to its response (by id), returning
// it with the events read on the way.
func (p *proc) call(line string) (*wire.Response, []wire.Event) {
	p.t.Helper()
	var probe struct{ ID string }
	_ = json.Unmarshal([]byte(line), &probe)
	p.send(line)
	var evs []wire.Event
	for {
		r := p.next()
		if r.resp == nil {
			evs = append(evs, r.ev)
			continue
		}
		if id, _ := json.Marshal(r.resp.ID); string(id) != `"`+probe.ID+`"` {
			p.t.Fatalf("response to another command: %s", r.raw)
		}
		return r.resp, evs
	}
}

// event reads frames until an event of type typ (which may already be
// among seen) and returns it.
func (p *proc) event(typ string, seen []wire.Event) wire.Event {
	p.t.Helper()
	for _, ev := range seen {
		if ev.Type() == typ {
			return ev
		}
	}
	evs := p.until(typ)
	return evs[len(evs)-1]
}

// TestExtensionsOverRPC drives an extension's commands and panels through
// `zot rpc`, every frame checked against the schema.
func TestExtensionsOverRPC(t *testing.T) {
	dir := t.TempDir()
	folder := pyExtension(t, dir, "py", "ok")
	p := start(t, nil, rpcArgs(t, "--ext", folder)...)

	r, evs := p.call(`{"id":"1","type":"run_command","name":"hello-py","args":"display hi there"}`)
	wantResponse(t, r, "run_command", true, "")
	var res wire.RunCommandResult
	json.Unmarshal(r.Data, &res)
	if res.Extension != "py" || res.Action != wire.CommandActionDisplay || res.Text != "hi there" {
		t.Fatalf("result: %s", r.Data)
	}
	d := p.event("ext_display", evs).(*wire.ExtDisplayEvent)
	if d.Text != "hi there" || d.Extension != "py" || d.PromptID != wire.StringID("1") {
		t.Fatalf("ext_display: %+v", d)
	}

	r, _ = p.call(`{"id":"2","type":"get_commands"}`)
	if !strings.Contains(string(r.Data), `{"name":"hello-py","description":"say hi","extension":"py","source":"extension","hint":"arguments (optional)"}`) {
		t.Fatalf("get_commands: %s", r.Data)
	}
	r, _ = p.call(`{"id":"3","type":"get_extensions"}`)
	if !strings.Contains(string(r.Data), `"state":"ready","tools":["py_echo","py_slow"],"commands":["hello-py"]`) {
		t.Fatalf("get_extensions: %s", r.Data)
	}

	r, evs = p.call(`{"id":"4","type":"run_command","name":"hello-py","args":"insert some text"}`)
	wantResponse(t, r, "run_command", true, "")
	if in := p.event("ext_insert", evs).(*wire.ExtInsertEvent); in.Text != "some text" {
		t.Fatalf("ext_insert: %+v", in)
	}

	r, evs = p.call(`{"id":"5","type":"run_command","name":"hello-py","args":"panel"}`)
	wantResponse(t, r, "run_command", true, "")
	if po := p.event("panel_open", evs).(*wire.PanelOpenEvent); po.PanelID != "p1" || po.Title != "Panel" {
		t.Fatalf("panel_open: %+v", po)
	}
	r, evs = p.call(`{"id":"6","type":"panel_key","panel_id":"p1","key":"rune","text":"x"}`)
	wantResponse(t, r, "panel_key", true, "")
	if pr := p.event("panel_render", evs).(*wire.PanelRenderEvent); len(pr.Lines) != 1 || pr.Lines[0] != "key rune x" {
		t.Fatalf("panel_render: %+v", pr)
	}
	r, evs = p.call(`{"id":"7","type":"close_panel","panel_id":"p1"}`)
	wantResponse(t, r, "close_panel", true, "")
	if pc := p.event("panel_close", evs).(*wire.PanelCloseEvent); pc.PanelID != "p1" || pc.Extension != "py" {
		t.Fatalf("panel_close: %+v", pc)
	}
	r, _ = p.call(`{"id":"8","type":"panel_key","panel_id":"p1","key":"down"}`)
	wantResponse(t, r, "panel_key", false, wire.CodeNotFound)

	r, _ = p.call(`{"id":"9","type":"run_command","name":"nope"}`)
	wantResponse(t, r, "run_command", false, wire.CodeNotFound)
	r, _ = p.call(`{"id":"10","type":"run_command","name":"hello-py","args":"fail"}`)
	if json.Unmarshal(r.Data, &res); !r.Success || res.Error != "it failed" || res.Action != wire.CommandActionNoop {
		t.Fatalf("failing command: %s", r.Data)
	}

	// A prompt action submits a prompt that carries the command's id.
	r, _ = p.call(`{"id":"11","type":"run_command","name":"hello-py","args":"go"}`)
	if json.Unmarshal(r.Data, &res); res.Action != wire.CommandActionPrompt || res.Started == nil || !*res.Started || res.Text != "hi from py: go" {
		t.Fatalf("prompt command: %s", r.Data)
	}
	for _, ev := range p.untilDone() {
		if ev.Type() == "user_message" && ev.GetPromptID() != wire.StringID("11") {
			t.Fatalf("the prompt's events carry prompt_id %v", ev.GetPromptID())
		}
	}

	r, _ = p.call(`{"id":"12","type":"reload_extensions"}`)
	wantResponse(t, r, "reload_extensions", true, "")
	if !strings.Contains(string(r.Data), `"state":"ready"`) {
		t.Fatalf("reload: %s", r.Data)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// reload_extensions is refused while a prompt runs; a crash is reported
// as ext_notify with level error and the agent carries on.
func TestExtensionsBusyAndCrash(t *testing.T) {
	dir := t.TempDir()
	slow := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": strings.Repeat("slow ", 40), "chunk": 4, "delay_ms": 10}}},
		map[string]any{"steps": []any{map[string]any{"tool_calls": []any{map[string]any{"name": "boom_echo", "args": map[string]any{"text": "x"}}}}, map[string]any{"text": "after the crash"}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", slow, "--ext", pyExtension(t, dir, "boom", "crash_on_tool"))...)
	r, _ := p.call(`{"id":"1","type":"prompt","message":"go"}`)
	wantResponse(t, r, "prompt", true, "")
	r, _ = p.call(`{"id":"2","type":"reload_extensions"}`)
	wantResponse(t, r, "reload_extensions", false, wire.CodeBusy)
	p.untilDone()

	r, _ = p.call(`{"id":"3","type":"prompt","message":"crash it"}`)
	wantResponse(t, r, "prompt", true, "")
	var crash *wire.ExtNotifyEvent
	var result *wire.ToolResultEvent
	for _, ev := range p.untilDone() {
		switch e := ev.(type) {
		case *wire.ExtNotifyEvent:
			if e.Level == "error" {
				crash = e
			}
		case *wire.ToolResultEvent:
			result = e
		}
	}
	if result == nil || !result.IsError {
		t.Fatalf("tool result: %+v", result)
	}
	if crash == nil {
		crash = p.event("ext_notify", nil).(*wire.ExtNotifyEvent)
	}
	if crash.Extension != "boom" || !strings.Contains(crash.Message, "exited with status 3") {
		t.Fatalf("crash notice: %+v", crash)
	}
}

// --no-ext skips the project's extensions; --ext still loads. The
// project's load only in a trusted folder, or with --trust-project.
func TestNoExtFlag(t *testing.T) {
	cwd := t.TempDir()
	homeEnv, _ := zotHomeEnv(t)
	env := []string{homeEnv}
	pyExtension(t, filepath.Join(cwd, ".zot", "extensions"), "proj", "ok")
	explicit := pyExtension(t, t.TempDir(), "mine", "ok")
	if out, stderr, code := runZot(t, "", env, "trust", cwd); code != 0 {
		t.Fatalf("zot trust: %d %s %s", code, out, stderr)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"proj"}},
		{[]string{"--no-ext"}, nil},
		{[]string{"--no-ext", "-e", explicit}, []string{"mine"}},
		{[]string{"--ext", explicit}, []string{"mine", "proj"}},
		{[]string{"untrust"}, nil},
		{[]string{"--ext", explicit}, []string{"mine"}},
		{[]string{"--trust-project"}, []string{"proj"}},
	} {
		if len(c.args) == 1 && c.args[0] == "untrust" {
			if out, stderr, code := runZot(t, "", env, "untrust", cwd); code != 0 {
				t.Fatalf("zot untrust: %d %s %s", code, out, stderr)
			}
			continue
		}
		p := start(t, env, append([]string{"rpc", "--provider", "scripted", "--cwd", cwd}, c.args...)...)
		r, _ := p.call(`{"id":"1","type":"get_extensions"}`)
		var res wire.ExtensionsResult
		json.Unmarshal(r.Data, &res)
		var got []string
		for _, e := range res.Extensions {
			got = append(got, e.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%v: extensions %v, want %v", c.args, got, c.want)
		}
		p.exit()
	}
}
