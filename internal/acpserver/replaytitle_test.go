package acpserver

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestReplayedCallsKeepTheirTitles: a history replayed by session/load
// titles each call as the live turn did: bash with its command, grep
// with its pattern, the file tools with their path.
func TestReplayedCallsKeepTheirTitles(t *testing.T) {
	m := &wire.Message{Role: wire.RoleAssistant, Content: []wire.ContentBlock{
		&wire.ToolCallBlock{ID: "1", Name: "bash", Args: json.RawMessage(`{"command":"go test ./...\necho done"}`)},
		&wire.ToolCallBlock{ID: "2", Name: "grep", Args: json.RawMessage(`{"pattern":"TODO"}`)},
		&wire.ToolCallBlock{ID: "3", Name: "read", Args: json.RawMessage(`{"path":"main.go"}`)},
		&wire.ToolCallBlock{ID: "4", Name: "ls", Args: json.RawMessage(`not json`)},
	}}
	want := []string{"bash: go test ./... …", "grep TODO", "read main.go", "ls"}
	ups := replayMessage(&turn{}, m, nil)
	if len(ups) != len(want) {
		t.Fatalf("%d updates, want %d", len(ups), len(want))
	}
	for i, u := range ups {
		if u.ToolCall == nil || u.ToolCall.Title != want[i] {
			t.Errorf("update %d: %+v, want the title %q", i, u.ToolCall, want[i])
		}
	}
}
