package doortest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// newRuntime is an SDK Runtime in a new directory playing script.
func newRuntime(t *testing.T, script string, edit func(*sdk.Config)) (*sdk.Runtime, string) {
	t.Helper()
	dir := t.TempDir()
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := sdk.Config{Provider: "scripted", Script: path, CWD: dir}
	if edit != nil {
		edit(&cfg)
	}
	rt, err := sdk.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, dir
}

// drain reads a prompt's events to the end.
func drain(t *testing.T, ch <-chan sdk.Event) []sdk.Event {
	t.Helper()
	var out []sdk.Event
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the prompt's events did not end; so far %d", len(out))
		}
	}
}

// eventLines renders events as a transcript's frames, without prompt_id
// (which only the rpc door sets: its commands have ids).
func eventLines(t *testing.T, dir string, evs []sdk.Event) []string {
	t.Helper()
	n := newNormalizer(dir)
	var out []string
	for _, ev := range evs {
		v, err := n.value(ev.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		delete(v.(map[string]any), "prompt_id")
		out = append(out, "< "+encode(v))
	}
	return out
}

// rpcEvents returns the events of the rpc transcript name's first prompt
// (its frames after the prompt's answer up to its done), without
// prompt_id.
func rpcEvents(t *testing.T, name string) (script string, events []string) {
	t.Helper()
	tr, err := readTranscript(filepath.Join("testdata", "rpc", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for line := range strings.Lines(tr.sections["frames"]) {
		line = strings.TrimRight(line, "\n")
		if !strings.HasPrefix(line, "< ") {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line[2:]), &v); err != nil {
			t.Fatal(err)
		}
		if v["type"] == "response" {
			in = v["command"] == "prompt"
			continue
		}
		if !in {
			continue
		}
		delete(v, "prompt_id")
		events = append(events, "< "+encode(v))
		if v["type"] == "done" {
			break
		}
	}
	return tr.sections["script.json"], events
}

// TestSDKEventsAreRPCEvents: the Go SDK delivers a prompt's events as the
// same values, in the same order, with the same seq, as zot rpc writes
// them (the rpc transcripts hold what rpc wrote); "plugins" with the
// session's extension and MCP server, configured as the SDK takes them.
func TestSDKEventsAreRPCEvents(t *testing.T) {
	plugins := func(c *sdk.Config) {
		c.Extensions = sdk.ExtensionConfig{Paths: []string{extDir(t)}}
		c.MCPServers = []sdk.MCPServer{echoMCP(t)}
	}
	for _, tc := range []struct {
		name string
		edit func(*sdk.Config)
	}{{"prompt", nil}, {"toolcall", nil}, {"plugins", plugins}} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			script, want := rpcEvents(t, name)
			if len(want) == 0 {
				t.Fatal("the rpc transcript has no events")
			}
			rt, dir := newRuntime(t, script, tc.edit)
			first := strings.TrimPrefix(want[0], "< ")
			var um struct {
				Content []struct{ Text string } `json:"content"`
			}
			if err := json.Unmarshal([]byte(first), &um); err != nil || len(um.Content) == 0 {
				t.Fatalf("the first event is not the user message: %s", first)
			}
			ch, err := rt.Prompt(context.Background(), um.Content[0].Text, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := eventLines(t, dir, drain(t, ch))
			if !slices.Equal(got, want) {
				t.Errorf("the SDK's events differ from rpc's:\n%s", lineDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
		})
	}
}

// types lists the events' types.
func types(evs []sdk.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type()
	}
	return out
}

// TestSDKApproval: the embedder's Approve callback is asked for each
// write between its tool_call and its tool_result; a rejected call does
// not run, an allowed one does.
func TestSDKApproval(t *testing.T) {
	var mu sync.Mutex
	var asked []sdk.ApprovalRequest
	rt, dir := newRuntime(t, `{"turns":[{"steps":[
 {"tool_calls":[{"id":"w1","name":"write","args":{"path":"a.txt","content":"a"}}]},
 {"tool_calls":[{"id":"w2","name":"write","args":{"path":"b.txt","content":"b"}}]},
 {"text":"One of two."}]}]}`, func(c *sdk.Config) {
		c.Approve = func(_ context.Context, req sdk.ApprovalRequest) sdk.Approval {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req)
			if req.ToolCallID == "w1" {
				return sdk.Approval{Decision: sdk.Reject, Reason: "not that one"}
			}
			return sdk.Approval{Decision: sdk.AllowOnce}
		}
	})
	ch, err := rt.Prompt(context.Background(), "write two files", nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, ch)
	mu.Lock()
	if len(asked) != 2 || asked[0].Tool != "write" || asked[1].ToolCallID != "w2" {
		t.Errorf("asked %+v", asked)
	}
	mu.Unlock()
	// Each request comes after its call and before its result.
	var order []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case *wire.ToolCallEvent:
			order = append(order, "call "+e.ID)
		case *wire.PermissionRequestEvent:
			order = append(order, "ask "+e.CallID)
		case *wire.ToolResultEvent:
			order = append(order, "result "+e.ID+" "+map[bool]string{true: "error", false: "ok"}[e.IsError])
		}
	}
	if want := []string{"call w1", "ask w1", "result w1 error", "call w2", "ask w2", "result w2 ok"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("the rejected write ran: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b.txt")); err != nil || string(b) != "b" {
		t.Errorf("the allowed write: %q, %v", b, err)
	}
}

// TestSDKCancel: Cancel ends the running prompt with turn_end aborted and
// done; the next prompt starts.
func TestSDKCancel(t *testing.T) {
	rt, _ := newRuntime(t, `{"turns":[{"steps":[{"text":"never","delay_ms":60000}]}]}`, nil)
	ch, err := rt.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []sdk.Event
	for ev := range ch {
		evs = append(evs, ev)
		if ev.Type() == "assistant_start" {
			if _, err := rt.Prompt(context.Background(), "second", nil); !errors.Is(err, sdk.ErrBusy) {
				t.Errorf("a prompt while one runs: %v, want ErrBusy", err)
			}
			if ok, err := rt.Cancel(context.Background()); !ok || err != nil {
				t.Errorf("Cancel: %v, %v", ok, err)
			}
		}
	}
	tt := types(evs)
	if n := len(tt); n < 2 || tt[n-2] != "turn_end" || tt[n-1] != "done" {
		t.Fatalf("events %q", tt)
	}
	if end := evs[len(evs)-2].(*wire.TurnEndEvent); end.Stop != wire.StopAborted {
		t.Errorf("stop %q", end.Stop)
	}
	ch, err = rt.Prompt(context.Background(), "again", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-ch; ev.Type() != "user_message" {
		t.Errorf("the next prompt began with %s", ev.Type())
	}
	if _, err := rt.Cancel(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tt := types(drain(t, ch)); tt[len(tt)-1] != "done" {
		t.Errorf("the next prompt: %q", tt)
	}
}

// TestSDKExtensionCommand: an extension's command through the SDK: listed,
// its notice pushed to OnEvent, a prompt it asks for run with its events,
// a panel opened, rendered on a key and closed on esc.
func TestSDKExtensionCommand(t *testing.T) {
	pushed := make(chan sdk.Event, 16)
	rt, _ := newRuntime(t, `{"turns":[{"steps":[{"echo":true}]}]}`, func(c *sdk.Config) {
		c.Extensions = sdk.ExtensionConfig{Paths: []string{extDir(t)}, OnEvent: func(ev sdk.Event) { pushed <- ev }}
	})
	ctx := context.Background()
	next := func() sdk.Event {
		t.Helper()
		select {
		case ev := <-pushed:
			return ev
		case <-time.After(guard):
			t.Fatal("nothing pushed")
			return nil
		}
	}

	res, ch, err := rt.RunCommand(ctx, "greet", "notify hello, door")
	if err != nil || ch != nil || res.Action != wire.CommandActionNoop {
		t.Fatalf("notify: %+v %v %v", res, ch, err)
	}
	if n, ok := next().(*wire.ExtNotifyEvent); !ok || n.Message != "hello, door" || n.Extension != "doorext" {
		t.Errorf("pushed %#v", n)
	}
	if cmds, err := rt.Commands(ctx); err != nil || !slices.ContainsFunc(cmds, func(c wire.SlashCommand) bool { return c.Name == "greet" && c.Extension == "doorext" }) {
		t.Errorf("commands %+v, %v", cmds, err)
	}

	res, ch, err = rt.RunCommand(ctx, "greet", "world")
	if err != nil || ch == nil || res.Text != "greetings: world" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	evs := drain(t, ch)
	if msg, ok := evs[len(evs)-3].(*wire.AssistantMessageEvent); !ok || len(msg.Content) == 0 {
		t.Errorf("events %q", types(evs))
	} else if tb, ok := msg.Content[0].(*wire.TextBlock); !ok || tb.Text != "You said: greetings: world" {
		t.Errorf("answer %#v", msg.Content[0])
	}

	res, _, err = rt.RunCommand(ctx, "greet", "panel")
	if err != nil || res.Action != wire.CommandActionOpenPanel || res.Panel == nil || res.Panel.ID != "p1" {
		t.Fatalf("panel: %+v %v", res, err)
	}
	if err := rt.PanelKey(ctx, "p1", wire.PanelKeyDown, ""); err != nil {
		t.Fatal(err)
	}
	if r, ok := next().(*wire.PanelRenderEvent); !ok || !slices.Equal(r.Lines, []string{"key down"}) {
		t.Errorf("render %#v", r)
	}
	if err := rt.PanelKey(ctx, "p1", wire.PanelKeyEsc, ""); err != nil {
		t.Fatal(err)
	}
	next() // its last render
	if c, ok := next().(*wire.PanelCloseEvent); !ok || c.PanelID != "p1" {
		t.Errorf("close %#v", c)
	}
	if _, _, err := rt.RunCommand(ctx, "nosuch", ""); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("an unknown command: %v", err)
	}
}

// TestSDKModes: the permission mode decides before Approve is asked:
// read_only refuses a write, accept_edits runs it, ask asks; an unknown
// mode is a *ModeError.
func TestSDKModes(t *testing.T) {
	asked := 0
	rt, dir := newRuntime(t, `{"turns":[{"steps":[
 {"tool_calls":[{"id":"w1","name":"write","args":{"path":"a.txt","content":"a"}}]},
 {"text":"ok"}]}]}`, func(c *sdk.Config) {
		c.Approve = func(context.Context, sdk.ApprovalRequest) sdk.Approval {
			asked++ // Approve is called from the agent's goroutine, one call at a time
			return sdk.Approval{Decision: sdk.AllowOnce}
		}
	})
	ctx := context.Background()
	result := func() *wire.ToolResultEvent {
		t.Helper()
		ch, err := rt.Prompt(ctx, "write", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range drain(t, ch) {
			if r, ok := ev.(*wire.ToolResultEvent); ok {
				return r
			}
		}
		t.Fatal("no tool_result")
		return nil
	}
	if err := rt.SetMode(ctx, sdk.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	if r := result(); !r.IsError || asked != 0 {
		t.Errorf("read_only: %+v, asked %d", r, asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("read_only let the write run: %v", err)
	}
	if err := rt.SetMode(ctx, sdk.ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	if r := result(); r.IsError || asked != 0 {
		t.Errorf("accept_edits: %+v, asked %d", r, asked)
	}
	if err := rt.SetMode(ctx, sdk.ModeAsk); err != nil {
		t.Fatal(err)
	}
	if r := result(); r.IsError || asked != 1 {
		t.Errorf("ask: %+v, asked %d", r, asked)
	}
	var me *sdk.ModeError
	if err := rt.SetMode(ctx, "yolo"); !errors.As(err, &me) {
		t.Errorf("an unknown mode: %v", err)
	}
	if rt.Mode() != sdk.ModeAsk {
		t.Errorf("mode %q", rt.Mode())
	}
}
