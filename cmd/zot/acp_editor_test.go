package main

// Tests of what makes zot native in an editor, through the real binary
// (zot acp over stdin/stdout, every frame checked against ACP's schema):
// the client's files and terminals serving the tools, session modes for
// the permission policy, and the model as a config option.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
)

// startACP runs zot acp with args and returns its checked peer.
func startACP(t *testing.T, home string, args ...string) (*acpPeer, io.WriteCloser, *zotbin.Buffer) {
	t.Helper()
	p := startACPProc(t, home, args...)
	return p.peer, p.stdin, p.stderr
}

// serve sends a request and answers the agent's requests with handle
// (method, params → result JSON, "" for a -32002 not-found error, "-"
// for no answer at all)
// until the answer to id comes; it returns the answer and what came
// before it.
func (p *acpPeer) serve(id, method, params string, handle func(method string, params json.RawMessage) string) (doorFrame, []doorFrame) {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	var before []doorFrame
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == id {
			return f, before
		}
		if f.Method != "" && f.ID != nil {
			if res := handle(f.Method, f.Params); res == "-" {
				// no answer: the agent gives up on it
			} else if res != "" {
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, f.ID, res))
			} else {
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32002,"message":"Resource not found"}}`, f.ID))
			}
		}
		before = append(before, f)
	}
}

// updates returns the update objects of the session/update frames.
func updates(frames []doorFrame) []map[string]any {
	var out []map[string]any
	for _, f := range frames {
		if f.Method != "session/update" {
			continue
		}
		var p struct {
			Update map[string]any `json:"update"`
		}
		if json.Unmarshal(f.Params, &p) == nil {
			out = append(out, p.Update)
		}
	}
	return out
}

func TestACPEditorBuffersAndTerminalServeTheTools(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	disk := filepath.Join(work, "a.txt")
	if err := os.WriteFile(disk, []byte("saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "r1", "name": "read", "args": map[string]any{"path": "a.txt"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"id": "e1", "name": "edit", "args": map[string]any{"path": "a.txt",
			"edits": []any{map[string]any{"old_text": "unsaved", "new_text": "edited"}}}}}},
		map[string]any{"tool_calls": []any{map[string]any{"id": "b1", "name": "bash", "args": map[string]any{"command": "echo from-terminal; exit 3"}}}},
		map[string]any{"text": "Done."},
	}}}})
	p, stdin, stderr := startACP(t, home, "--provider", "scripted", "--script", s, "--permission", "allow",
		// The editor runs bash only where zot confines nothing (docs/sandbox.md).
		"--sandbox", "full")
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)

	buffer := "unsaved\n"
	var asked []string
	var created struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		CWD     string   `json:"cwd"`
	}
	var termOut []byte
	var termCode int
	f, before := p.serve("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id),
		func(method string, params json.RawMessage) string {
			asked = append(asked, method)
			var q struct {
				Path       string `json:"path"`
				Content    string `json:"content"`
				TerminalID string `json:"terminalId"`
			}
			_ = json.Unmarshal(params, &q)
			switch method {
			case "fs/read_text_file":
				if q.Path != disk {
					return ""
				}
				b, _ := json.Marshal(map[string]string{"content": buffer})
				return string(b)
			case "fs/write_text_file":
				buffer = q.Content
				return `{}`
			case "terminal/create":
				_ = json.Unmarshal(params, &created)
				c := exec.Command(created.Command, created.Args...)
				c.Dir = created.CWD
				termOut, _ = c.CombinedOutput()
				termCode = c.ProcessState.ExitCode()
				return `{"terminalId":"term-1"}`
			case "terminal/wait_for_exit":
				return fmt.Sprintf(`{"exitCode":%d}`, termCode)
			case "terminal/output":
				b, _ := json.Marshal(map[string]any{"output": string(termOut), "truncated": false, "exitStatus": map[string]any{"exitCode": termCode}})
				return string(b)
			case "terminal/release":
				return `{}`
			}
			t.Errorf("unexpected request %s", method)
			return ""
		})
	if f.Error != nil || !strings.Contains(string(f.Result), `"end_turn"`) {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	want := "fs/read_text_file fs/read_text_file fs/write_text_file terminal/create terminal/wait_for_exit terminal/output terminal/release"
	if got := strings.Join(asked, " "); got != want {
		t.Errorf("the agent asked\n %s\nwant\n %s", got, want)
	}
	if buffer != "edited\n" {
		t.Errorf("the buffer after the edit: %q", buffer)
	}
	if b, _ := os.ReadFile(disk); string(b) != "saved\n" {
		t.Errorf("the disk was written: %q", b)
	}
	if created.Command != "bash" || len(created.Args) != 2 || created.Args[1] != "echo from-terminal; exit 3" || created.CWD != work {
		t.Errorf("terminal/create %+v", created)
	}
	// The read showed the buffer; the bash call embeds its terminal, in
	// the update that shows it and in its last one, and its result has
	// the terminal's output and exit code.
	var readText, bashText string
	terminalShown, terminalKept := false, false
	for _, u := range updates(before) {
		if u["sessionUpdate"] != "tool_call_update" {
			continue
		}
		raw, _ := json.Marshal(u["content"])
		switch u["toolCallId"] {
		case "r1":
			readText += string(raw)
		case "b1":
			hasTerm := strings.Contains(string(raw), `"terminalId":"term-1"`)
			if u["status"] == nil && hasTerm {
				terminalShown = true
			}
			if u["status"] == "failed" {
				terminalKept = hasTerm
				bashText = string(raw)
			}
		}
	}
	if !strings.Contains(readText, "unsaved") {
		t.Errorf("read did not show the buffer: %s", readText)
	}
	if !terminalShown || !terminalKept {
		t.Errorf("terminal embedded: at once %v, at the end %v", terminalShown, terminalKept)
	}
	if !strings.Contains(bashText, "from-terminal") || !strings.Contains(bashText, "exit code 3") {
		t.Errorf("bash result: %s", bashText)
	}
	stdin.Close()
}

func TestACPWithoutClientCapabilitiesUsesDiskAndShell(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "w1", "name": "write", "args": map[string]any{"path": "b.txt", "content": "disk\n"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"id": "b1", "name": "bash", "args": map[string]any{"command": "cat b.txt"}}}},
		map[string]any{"text": "Done."},
	}}}})
	p, stdin, stderr := startACP(t, home, "--provider", "scripted", "--script", s, "--permission", "allow")
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}`, "")
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	f, before := p.serve("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id),
		func(method string, _ json.RawMessage) string {
			t.Errorf("the agent asked %s of a client that offers nothing", method)
			return ""
		})
	if f.Error != nil {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "b.txt")); string(b) != "disk\n" {
		t.Errorf("b.txt: %q", b)
	}
	out, _ := json.Marshal(updates(before))
	if !strings.Contains(string(out), `disk\n[exit code 0]`) {
		t.Errorf("bash did not run in zot's shell: %s", out)
	}
	stdin.Close()
}

func TestACPModesAndModelOption(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	models := filepath.Join(t.TempDir(), "models.json")
	if err := os.WriteFile(models, []byte(`{"models":[{"id":"scripted-large","provider":"scripted","context_window":400000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	write := map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "w", "name": "write", "args": map[string]any{"path": "m.txt", "content": "x"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"id": "b", "name": "bash", "args": map[string]any{"command": "true"}}}},
		map[string]any{"text": "ok"},
	}}
	s := script(t, map[string]any{"turns": []any{write, write, map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	p, stdin, stderr := startACP(t, home, "--provider", "scripted", "--script", s, "--models-file", models)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)
	var res struct {
		Modes struct {
			Current   string `json:"currentModeId"`
			Available []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
		ConfigOptions []struct {
			ID       string `json:"id"`
			Category string `json:"category"`
			Current  string `json:"currentValue"`
			Options  []struct {
				Value string `json:"value"`
			} `json:"options"`
		} `json:"configOptions"`
	}
	if err := json.Unmarshal(f.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res.Modes.Current != "ask" || len(res.Modes.Available) != 4 {
		t.Errorf("modes %s", f.Result)
	}
	if len(res.ConfigOptions) != 2 || res.ConfigOptions[0].ID != "model" || res.ConfigOptions[0].Current != "scripted" ||
		!strings.Contains(string(f.Result), `"value":"scripted-large"`) {
		t.Errorf("config options %s", f.Result)
	}
	// The reasoning level, ACP's thought_level: the model's default, then
	// the levels it takes.
	if len(res.ConfigOptions) == 2 {
		th := res.ConfigOptions[1]
		var values []string
		for _, o := range th.Options {
			values = append(values, o.Value)
		}
		if th.ID != "thought_level" || th.Category != "thought_level" || th.Current != "default" || strings.Join(values, ",") != "default,low,medium,high" {
			t.Errorf("thought_level option %+v", th)
		}
	}

	// accept_edits: the write runs without asking, bash asks.
	f, early := p.call("3", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":"accept_edits"}`, id), "")
	if f.Error != nil {
		t.Fatalf("set_mode: %s", f.raw)
	}
	f, before := p.call("4", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "allow_once")
	if f.Error != nil {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	var askedFor []string
	modeUpdate := false
	for _, fr := range append(early, before...) {
		if fr.Method == "session/request_permission" {
			var q struct {
				ToolCall struct {
					ID string `json:"toolCallId"`
				} `json:"toolCall"`
			}
			_ = json.Unmarshal(fr.Params, &q)
			askedFor = append(askedFor, q.ToolCall.ID)
		}
		modeUpdate = modeUpdate || strings.Contains(fr.raw, `"sessionUpdate":"current_mode_update","currentModeId":"accept_edits"`)
	}
	if strings.Join(askedFor, ",") != "b" {
		t.Errorf("accept_edits asked for %v, want only the bash call", askedFor)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "m.txt")); string(b) != "x" {
		t.Errorf("m.txt %q", b)
	}
	if !modeUpdate {
		t.Error("no current_mode_update after session/set_mode")
	}

	// read_only: both calls are refused without asking.
	p.call("5", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":"read_only"}`, id), "")
	os.Remove(filepath.Join(work, "m.txt"))
	f, before = p.call("6", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "allow_once")
	if f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	for _, fr := range before {
		if fr.Method == "session/request_permission" {
			t.Error("read_only asked the client")
		}
	}
	if _, err := os.Stat(filepath.Join(work, "m.txt")); err == nil {
		t.Error("read_only let the write run")
	}
	if got := strings.Count(strings.Join(updateKinds(before), " "), "tool_call_update:failed"); got != 2 {
		t.Errorf("read_only: %d failed calls, want 2: %v", got, updateKinds(before))
	}
	if f, _ := p.call("7", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":"yolo"}`, id), ""); f.Error == nil || f.Error.Data["field"] != "modeId" {
		t.Errorf("an unknown mode: %s", f.raw)
	}

	// The model option.
	f, early = p.call("8", "session/set_config_option", fmt.Sprintf(`{"sessionId":%q,"configId":"model","value":"scripted-large"}`, id), "")
	if f.Error != nil || !strings.Contains(string(f.Result), `"currentValue":"scripted-large"`) {
		t.Fatalf("set_config_option: %s", f.raw)
	}
	f, more := p.call("9", "_zot/models/list", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	early = append(early, more...)
	if !strings.Contains(string(f.Result), `"currentModelId":"scripted-large"`) {
		t.Errorf("the model did not change: %s", f.raw)
	}
	f, more = p.call("10", "session/set_config_option", fmt.Sprintf(`{"sessionId":%q,"configId":"model","value":"gpt-nothing"}`, id), "")
	early = append(early, more...)
	if f.Error == nil || f.Error.Data["field"] != "value" {
		t.Errorf("an unknown model: %s", f.raw)
	}
	f, more = p.call("11", "session/set_config_option", fmt.Sprintf(`{"sessionId":%q,"configId":"colour","value":"red"}`, id), "")
	early = append(early, more...)
	if f.Error == nil || f.Error.Data["field"] != "configId" {
		t.Errorf("an unknown option: %s", f.raw)
	}
	// The thought level: one the model takes, then one it does not.
	f, more = p.call("21", "session/set_config_option", fmt.Sprintf(`{"sessionId":%q,"configId":"thought_level","value":"high"}`, id), "")
	early = append(early, more...)
	if f.Error != nil || !strings.Contains(string(f.Result), `"currentValue":"high"`) {
		t.Errorf("thought_level high: %s", f.raw)
	}
	f, more = p.call("22", "session/set_config_option", fmt.Sprintf(`{"sessionId":%q,"configId":"thought_level","value":"max"}`, id), "")
	early = append(early, more...)
	if f.Error == nil || f.Error.Data["field"] != "value" {
		t.Errorf("a level the model does not take: %s", f.raw)
	}
	// Every client of the session is told, before the answer of any
	// later prompt.
	f, before = p.call("12", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), "")
	if f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	told := 0
	for _, fr := range append(early, before...) {
		if strings.Contains(fr.raw, `"sessionUpdate":"config_option_update"`) && strings.Contains(fr.raw, `"currentValue":"scripted-large"`) {
			told++
		}
	}
	if told != 2 {
		t.Errorf("%d config_option_update with the new model, want 2 (the model's, the thought level's)", told)
	}
	stdin.Close()
}

func TestACPEditorTerminalKilledAtTheTimeout(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "b1", "name": "bash", "args": map[string]any{"command": "sleep 600", "timeout": 1}}}},
		map[string]any{"text": "Done."},
	}}}})
	p, stdin, stderr := startACP(t, home, "--provider", "scripted", "--script", s, "--permission", "allow", "--sandbox", "full")
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{"terminal":true}}`, "")
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	var asked []string
	f, before := p.serve("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id),
		func(method string, _ json.RawMessage) string {
			asked = append(asked, method)
			switch method {
			case "terminal/create":
				return `{"terminalId":"t9"}`
			case "terminal/wait_for_exit":
				return "-" // the command never ends
			case "terminal/kill", "terminal/release":
				return `{}`
			case "terminal/output":
				return `{"output":"partial\n","truncated":false,"exitStatus":{"signal":"SIGKILL"}}`
			}
			return ""
		})
	if f.Error != nil {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	if got := strings.Join(asked, " "); got != "terminal/create terminal/wait_for_exit terminal/kill terminal/output terminal/release" {
		t.Errorf("the agent asked %s", got)
	}
	cancelled := false
	for _, fr := range before {
		cancelled = cancelled || fr.Method == "$/cancel_request"
	}
	if !cancelled {
		t.Error("the wait for the killed terminal was not cancelled with $/cancel_request")
	}
	out, _ := json.Marshal(updates(before))
	if !strings.Contains(string(out), `partial\n[timed out after 1s]`) {
		t.Errorf("bash result: %s", out)
	}
	stdin.Close()
}
