package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/style"
)

// childUpdate is an update of task call t1 carrying one event of its
// sub-agent, as zot's ACP server sends it.
func childUpdate(event map[string]any, path ...any) acp.SessionUpdate {
	ce := map[string]any{"parentId": "t1", "agent": "explore", "event": event}
	if len(path) > 0 {
		ce["path"] = path
	}
	return acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "t1", Meta: map[string]any{"zot": map[string]any{"childEvent": ce}}}}
}

// A task call is a block: while its sub-agent runs, its newest steps;
// once done, collapsed to the count of steps and its answer's first lines.
func TestTaskCallBlock(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "t1", Title: "task: find the bug", Status: acp.ToolCallStatusInProgress}})
	for i := 1; i <= 7; i++ {
		st.update(childUpdate(map[string]any{"type": "tool_call", "id": fmt.Sprint("c", i), "name": "grep", "args": map[string]any{"pattern": fmt.Sprint("needle", i)}}))
	}
	st.update(childUpdate(map[string]any{"type": "tool_call", "id": "g1", "name": "bash", "args": map[string]any{"command": "go test ./...\nmore"}}, "c7"))
	screen := st.screen()
	for _, want := range []string{"task: find the bug", "explore · 8 steps", "3 earlier steps", "grep needle7", "bash go test ./..."} {
		if !strings.Contains(screen, want) {
			t.Errorf("the running block lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "needle3") || strings.Contains(screen, "more") {
		t.Errorf("the running block shows more than its newest steps:\n%s", screen)
	}
	st.update(childUpdate(map[string]any{"type": "assistant_message", "content": []any{map[string]any{"type": "text", "text": "line one\nline two\nline three\nline four\nline five"}}}))
	st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "t1", Status: acp.ToolCallStatusCompleted,
		Content: []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: `{"stop":"end_turn","text":"line one"}`}}}}}}})
	got := strings.Join(st.scrollback, "\n")
	for _, want := range []string{"task: find the bug", "8 steps", "line one", "line three", "2 more lines"} {
		if !strings.Contains(got, want) {
			t.Errorf("the finished block lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"needle", `"stop"`, "line four"} {
		if strings.Contains(got, not) {
			t.Errorf("the finished block is not collapsed (%q):\n%s", not, got)
		}
	}
	// ctrl+o unfolds it: every step, the whole answer.
	body := strings.Join(st.m.toolBody(st.m.lastTool, 78), "\n")
	for _, want := range []string{"→ grep needle1", "→ grep needle7", "→   bash go test ./...", "line five"} {
		if !strings.Contains(body, want) {
			t.Errorf("the unfolded block lacks %q:\n%s", want, body)
		}
	}
}

// A sub-agent that was aborted says so when its block collapses.
func TestTaskCallBlockAborted(t *testing.T) {
	st := newScreenTest(t, 80, 24, style.Options{NoColor: true})
	st.m.busy, st.m.started = true, time.Now()
	st.update(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "t1", Title: "task: slow", Status: acp.ToolCallStatusInProgress}})
	st.update(childUpdate(map[string]any{"type": "turn_end", "stop": "aborted"}))
	st.update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "t1", Status: acp.ToolCallStatusFailed}})
	if got := strings.Join(st.scrollback, "\n"); !strings.Contains(got, "task: slow") || !strings.Contains(got, "aborted") {
		t.Errorf("the aborted block:\n%s", got)
	}
}
