package main

// Slash commands, plans and titles through zot acp: the built-in and
// extension commands listed with available_commands_update after
// session/new and after /reload, a prompt starting with /name running
// the command, the todo tool's plan, and the title of the first prompt,
// every frame checked against ACP's schema.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// commandNames returns the names of the last available_commands_update
// among frames.
func commandNames(t *testing.T, frames []doorFrame) []string {
	t.Helper()
	var names []string
	for _, u := range updates(frames) {
		if u["sessionUpdate"] != "available_commands_update" {
			continue
		}
		names = names[:0]
		for _, c := range u["availableCommands"].([]any) {
			names = append(names, c.(map[string]any)["name"].(string))
		}
	}
	return names
}

func TestACPSlashCommandsPlanAndTitle(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	extDir := filepath.Join(work, ".zot", "extensions")
	pyExtension(t, extDir, "py", "ok")
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "p1", "name": "todo", "args": map[string]any{"entries": []any{
				map[string]any{"content": "read the code", "status": "completed"},
				map[string]any{"content": "fix the bug", "status": "in_progress", "priority": "high"},
			}}}}},
			map[string]any{"text": "Planned."},
		}},
		map[string]any{"steps": []any{map[string]any{"text": "answered the extension's prompt"}}},
	}})
	// The daemon's user trusts the folder, as `zot trust` records it.
	if out, errOut, code := runZot(t, "", []string{"ZOT_HOME=" + home}, "trust", work); code != 0 {
		t.Fatalf("zot trust: %d %s %s", code, out, errOut)
	}
	p, stdin, stderr := startACP(t, home, "--provider", "scripted", "--script", s, "--permission", "allow")
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, early := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")
	id := sessionID(t, f)

	// The first prompt: its title, then the plan of the todo call.
	f, before := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"Fix the login bug\nit fails on empty passwords"}]}`, id), "")
	if f.Error != nil || !strings.Contains(string(f.Result), "end_turn") {
		t.Fatalf("prompt: %s\n%s", f.raw, stderr)
	}
	all := append(early, before...)
	// After session/new: the built-ins at once, the extension's once it is ready.
	if got := strings.Join(commandNames(t, all), " "); got != "help compact clear model mode reload undo jail unjail skills agents hello-py" {
		t.Errorf("commands %q", got)
	}
	var plan, title string
	for _, u := range updates(all) {
		switch u["sessionUpdate"] {
		case "plan":
			b, _ := json.Marshal(u["entries"])
			plan = string(b)
		case "session_info_update":
			title, _ = u["title"].(string)
		}
	}
	if plan != `[{"content":"read the code","priority":"medium","status":"completed"},{"content":"fix the bug","priority":"high","status":"in_progress"}]` {
		t.Errorf("plan %s", plan)
	}
	if title != "Fix the login bug" {
		t.Errorf("title %q", title)
	}

	// An extension's command that displays text, then one that prompts.
	f, before = p.call("4", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/hello-py display hi there"}]}`, id), "")
	if f.Error != nil || chunkText(before, "agent_message_chunk") != "hi there" {
		t.Errorf("/hello-py display: %s %v", f.raw, updateKinds(before))
	}
	f, before = p.call("5", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/hello-py go on"}]}`, id), "")
	if f.Error != nil || chunkText(before, "agent_message_chunk") != "answered the extension's prompt" {
		t.Errorf("/hello-py prompt: %s %v", f.raw, updateKinds(before))
	}
	// Built-ins: /mode switches, /model lists, /clear clears.
	f, before = p.call("6", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/mode read_only"}]}`, id), "")
	if f.Error != nil || !strings.Contains(strings.Join(updateKinds(before), " "), "current_mode_update") {
		t.Errorf("/mode: %s %v", f.raw, updateKinds(before))
	}
	_, before = p.call("7", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/model"}]}`, id), "")
	if got := chunkText(before, "agent_message_chunk"); !strings.Contains(got, "Model: scripted.") {
		t.Errorf("/model: %q", got)
	}
	_, _ = p.call("8", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/clear"}]}`, id), "")
	if f, _ := p.call("9", "_zot/status", `{}`, ""); !strings.Contains(string(f.Result), `"messageCount":0`) {
		t.Errorf("/clear left messages: %s", f.raw)
	}
	// A path is no command: it goes to the model, into the transcript.
	if f, _ := p.call("10", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/usr/bin is what?"}]}`, id), ""); f.Error != nil {
		t.Errorf("prompt: %s", f.raw)
	}
	if f, _ := p.call(`"10b"`, "_zot/session/history", fmt.Sprintf(`{"sessionId":%q}`, id), ""); !strings.Contains(string(f.Result), "/usr/bin is what?") {
		t.Errorf("a prompt starting with a path did not reach the model: %s", f.raw)
	}
	// A new extension changes what the folder runs: until the folder is
	// trusted again, /reload starts none of its extensions.
	pyExtension(t, extDir, "py2", "ok")
	f, before = p.call("11", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/reload"}]}`, id), "")
	if f.Error != nil {
		t.Fatalf("/reload: %s", f.raw)
	}
	if got := strings.Join(commandNames(t, before), " "); got != "help compact clear model mode reload undo jail unjail skills agents" {
		t.Errorf("commands after /reload in a folder that changed since it was trusted %q", got)
	}
	// Trusted again, a new extension command after /reload is told to
	// the client.
	if out, errOut, code := runZot(t, "", []string{"ZOT_HOME=" + home}, "trust", work); code != 0 {
		t.Fatalf("zot trust: %d %s %s", code, out, errOut)
	}
	f, before = p.call("12", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/reload"}]}`, id), "")
	if f.Error != nil {
		t.Fatalf("/reload: %s", f.raw)
	}
	if got := strings.Join(commandNames(t, before), " "); got != "help compact clear model mode reload undo jail unjail skills agents hello-py hello-py2" {
		t.Errorf("commands after /reload %q", got)
	}
	stdin.Close()
}
