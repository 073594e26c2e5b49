package exthost

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// TestPythonExtension runs every feature through the Python extension:
// its tool, its commands and their five actions, panels, notices and the
// lifecycle events in order.
func TestPythonExtension(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t, pyExt(t, dir, "py", "ok"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())

	if infos := h.Extensions(); len(infos) != 1 || infos[0].State != "ready" {
		t.Fatalf("extensions: %+v", infos)
	}
	got.waitMessage(t, "event session_start")
	if r := runTool(t, sess, "py_echo", `{"text":"hi"}`); text(r) != "echo: hi" || r.IsError {
		t.Fatalf("tool result: %q error=%v", text(r), r.IsError)
	}

	cmds := h.Commands()
	if len(cmds) != 1 || cmds[0].Name != "hello-py" || cmds[0].Extension != "py" {
		t.Fatalf("commands: %+v", cmds)
	}
	for _, c := range []struct {
		args   string
		action extwire.CommandAction
		check  func(*extwire.CommandResponseFrame) bool
	}{
		{"world", extwire.CommandActionPrompt, func(r *extwire.CommandResponseFrame) bool { return r.Prompt == "hi from py: world" }},
		{"display note", extwire.CommandActionDisplay, func(r *extwire.CommandResponseFrame) bool { return r.Display == "note" }},
		{"insert text", extwire.CommandActionInsert, func(r *extwire.CommandResponseFrame) bool { return r.Insert == "text" }},
		{"noop", extwire.CommandActionNoop, func(r *extwire.CommandResponseFrame) bool { return r.Error == "" }},
		{"fail", extwire.CommandActionNoop, func(r *extwire.CommandResponseFrame) bool { return r.Error == "it failed" }},
		{"panel", extwire.CommandActionOpenPanel, func(r *extwire.CommandResponseFrame) bool {
			return r.OpenPanel != nil && r.OpenPanel.ID == "p1" && r.OpenPanel.Title == "Panel"
		}},
	} {
		cmd, r, err := h.RunCommand(context.Background(), "hello-py", c.args)
		if err != nil || cmd.Extension != "py" || r.Action != c.action || !c.check(r) {
			t.Fatalf("/hello-py %s: %+v %+v %v", c.args, cmd, r, err)
		}
	}
	if _, _, err := h.RunCommand(context.Background(), "nope", ""); err == nil {
		t.Fatal("an unknown command runs")
	}

	// The panel opened by the last command takes keys; its redraws and its
	// closing come back as notices.
	if err := h.PanelKey("p1", extwire.KeyNameRune, "x"); err != nil {
		t.Fatal(err)
	}
	n := got.wait(t, "panel_render", func(n Notice) bool { return n.Kind == NoticePanelRender })
	if n.Panel.ID != "p1" || len(n.Panel.Lines) != 1 || n.Panel.Lines[0] != "key rune x" {
		t.Fatalf("render: %+v", n)
	}
	if err := h.PanelKey("p1", extwire.KeyNameEsc, ""); err != nil {
		t.Fatal(err)
	}
	got.wait(t, "panel_close", func(n Notice) bool { return n.Kind == NoticePanelClose && n.Panel.ID == "p1" })
	if err := h.PanelKey("p1", extwire.KeyNameDown, ""); err == nil {
		t.Fatal("a closed panel takes keys")
	}
	h.RunCommand(context.Background(), "hello-py", "panel")
	if owner, err := h.ClosePanel("p1"); err != nil || owner != "py" {
		t.Fatal(owner, err)
	}
	got.waitMessage(t, "panel closed p1")

	// Lifecycle events arrive in the order they happened.
	step := int64(1)
	sess.emit(&wire.TurnStartEvent{Step: step})
	sess.emit(&wire.ToolCallEvent{ID: "c1", Name: "read", Args: []byte(`{"path":"a"}`)})
	sess.emit(&wire.TurnEndEvent{Stop: wire.StopToolUse})
	sess.emit(&wire.AssistantMessageEvent{Content: wire.ContentBlocks{&wire.TextBlock{Text: "all done"}}})
	got.waitMessage(t, "event assistant_message all done")
	var order []string
	for _, m := range got.messages() {
		if i := strings.Index(m, "event "); i >= 0 {
			order = append(order, m[i:])
		}
	}
	want := []string{"event session_start ", "event turn_start 1", "event tool_call read", "event turn_end tool_use", "event assistant_message all done"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Fatalf("events:\n got %q\nwant %q", order, want)
	}
}

// TestNodeAndGoExtensions: the same protocol from Node and from Go.
func TestNodeAndGoExtensions(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t, nodeExt(t, dir, "nd", "ok"), goExt(t, dir, "gx"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	if r := runTool(t, sess, "nd_echo", `{"text":"a"}`); text(r) != "echo: a" {
		t.Fatalf("node: %q", text(r))
	}
	if r := runTool(t, sess, "gx_echo", `{"text":"b"}`); text(r) != "echo: b" {
		t.Fatalf("go: %q", text(r))
	}
	_, r, err := h.RunCommand(context.Background(), "hello-nd", "x")
	if err != nil || r.Action != extwire.CommandActionDisplay || r.Display != "node says x" {
		t.Fatalf("node command: %+v %v", r, err)
	}
	sess.emit(&wire.TurnStartEvent{Step: 2})
	got.waitMessage(t, "event turn_start 2")
}

// The tool_result scanner agrees with the generated decoder.
func TestDecodeToolResult(t *testing.T) {
	for _, line := range []string{
		`{"type":"tool_result","id":"1","content":[{"type":"text","text":"a\nb"},{"type":"image","mime_type":"image/png","data":"iVBORw0KGgo="}],"is_error":true}`,
		`{"type":"tool_result","id":"2"}`,
		`{"type":"tool_result","id":"3","content":[]}`,
		`{"type":"tool_result","id":"4","content":[{"type":"text","text":""}],"extra":1}`,
		`{"type":"tool_result","id":"6","content":[{"type":"text"}]}`,
	} {
		want, err := extwire.DecodeExtensionFrame([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeFrame([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if string(got.AppendJSON(nil)) != string(want.AppendJSON(nil)) {
			t.Errorf("%s:\n got %s\nwant %s", line, got.AppendJSON(nil), want.AppendJSON(nil))
		}
	}
	for _, line := range []string{
		`{"type":"tool_result","id":"5","content":[{"type":"video"}]}`,
		`{"type":"tool_result","id":7}`,
	} {
		_, want := extwire.DecodeExtensionFrame([]byte(line))
		_, got := decodeFrame([]byte(line))
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: got %v, want %v", line, got, want)
		}
	}
}

// TestNothingInstalledCostsNothing: with no extension found, the host
// leaves nothing in the session once launched: no interceptor for every
// turn to pass, no observer for every event.
func TestNothingInstalledCostsNothing(t *testing.T) {
	sess := newFakeSession(t)
	cfg, _, _ := testConfig(t)
	cfg.ProjectDir = filepath.Join(sess.CWD(), ".zot", "extensions")
	h := New(sess, cfg)
	defer h.Close(context.Background())
	h.Launch()
	if n := sess.chain.Len(); n != 0 {
		t.Errorf("%d interceptors left in the chain", n)
	}
	sess.mu.Lock()
	observers := len(sess.obs)
	sess.mu.Unlock()
	if observers != 0 {
		t.Errorf("%d observers left on the session", observers)
	}
	if list := h.Extensions(); len(list) != 0 {
		t.Errorf("extensions %v", list)
	}
}

// An extension tool's result may carry images: a good one reaches the
// model as an image block, one that is not an image turns into a note
// and marks the result as an error.
func TestToolResultImages(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, _ := testConfig(t, pyExt(t, dir, "py", "ok"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())

	r := runTool(t, sess, "py_echo", `{"text":"look","image":"good"}`)
	if r.IsError || len(r.Content) != 2 || text(r) != "echo: look" {
		t.Fatalf("result: %+v", r)
	}
	img, ok := r.Content[1].(*llm.ImageBlock)
	if !ok || img.MIME != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
		t.Fatalf("image block: %#v", r.Content[1])
	}

	r = runTool(t, sess, "py_echo", `{"text":"look","image":"bad"}`)
	if !r.IsError || !strings.Contains(text(r), "content[1]: unusable image") {
		t.Fatalf("result: %q error=%v", text(r), r.IsError)
	}
}

// hello_ack tells an extension what the protocol lists, the session's
// directory among it; it runs in its own folder, without the token
// clients authenticate with.
func TestHelloAckAndEnvironment(t *testing.T) {
	t.Setenv("ZOTCORE_RPC_TOKEN", "secret")
	dir := t.TempDir()
	folder := pyExt(t, dir, "probe", "probe")
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t, folder)
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	n := got.waitMessage(t, "hello_ack ")
	var ack map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(n.Message, "hello_ack ")), &ack); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "hello_ack", "protocol_version": float64(ProtocolVersion), "zot_version": "test",
		"provider": "scripted", "model": "scripted-1", "cwd": sess.CWD(),
		"extension_dir": folder, "data_dir": folder,
	}
	for k, v := range want {
		if ack[k] != v {
			t.Errorf("hello_ack %s = %v, want %v", k, ack[k], v)
		}
	}
	if n := got.waitMessage(t, "cwd "); n.Message != "cwd "+folder {
		t.Errorf("it runs in %q, not its own folder %q", n.Message, folder)
	}
	if n := got.waitMessage(t, "token "); n.Message != "token unset" {
		t.Errorf("the rpc token reached the extension: %q", n.Message)
	}
}
