package acpserver

import (
	"errors"
	"fmt"
	"testing"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/mcphost"
	zsession "zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/sdk/wire"
)

// TestErrorOf: each kind of error the engine and the session store
// return reaches an ACP client as one JSON-RPC code and kind, with the
// session and the field named.
func TestErrorOf(t *testing.T) {
	own := jsonrpc.InvalidParams("modeId", "no mode %q", "yolo")
	for _, tc := range []struct {
		name      string
		closed    bool
		err       error
		field     string
		code      int64
		kind      string
		retryable bool
		data      map[string]any
	}{
		{"busy", false, fmt.Errorf("clear: %w", engine.ErrBusy), "", 1001, "busy", true, map[string]any{"sessionId": "s1"}},
		{"unknown model", false, &engine.UnknownModelError{Provider: "scripted"}, "value", -32602, "invalid_params", false, map[string]any{"sessionId": "s1", "field": "value"}},
		{"reasoning level", false, &engine.ReasoningError{Err: errors.New("takes no xhigh")}, "value", -32602, "invalid_params", false, map[string]any{"sessionId": "s1", "field": "value"}},
		{"working directory", false, fmt.Errorf("%w /nope is not a directory", engine.ErrWorkDir), "cwd", -32602, "invalid_params", false, map[string]any{"sessionId": "s1", "field": "cwd"}},
		{"provider", false, &wire.Error{Code: wire.CodeProviderError, Message: "503"}, "", 1003, "provider_error", true, map[string]any{"sessionId": "s1"}},
		{"locked file", false, fmt.Errorf("session file x: %w", zsession.ErrLocked), "", 1002, "session_locked", true, map[string]any{"sessionId": "s1"}},
		{"damaged file", false, &zsession.CorruptError{Path: "/h/s1.jsonl", Line: 7, Err: errors.New("bad json")}, "", 1007, "session_corrupt", false, map[string]any{"sessionId": "s1", "file": "/h/s1.jsonl", "line": 7}},
		{"closed session", false, engine.ErrClosed, "", -32002, "unknown_session", false, map[string]any{"sessionId": "s1"}},
		{"closed by the daemon stopping", true, engine.ErrClosed, "", -32800, "cancelled", false, map[string]any{"sessionId": "s1"}},
		{"a mode the session lacks", false, &engine.ModeError{Mode: "yolo", Offered: []engine.PermissionMode{"ask", "auto"}}, "modeId", -32602, "invalid_params", false, map[string]any{"sessionId": "s1", "field": "modeId"}},
		{"an MCP server not usable", false, &mcphost.ConfigError{Err: errors.New("an MCP server has no name")}, "mcpServers[0]", -32602, "invalid_params", false, map[string]any{"sessionId": "s1", "field": "mcpServers[0]"}},
		{"a fault", false, errors.New("disk on fire"), "prompt", -32603, "internal", false, map[string]any{"sessionId": "s1"}},
		{"an answer already made", false, fmt.Errorf("set_mode: %w", own), "", -32602, "invalid_params", false, map[string]any{"field": "modeId"}},
	} {
		a := &Agent{closed: tc.closed}
		got := a.errorOf(tc.err, "s1", tc.field)
		if got.Code != tc.code || got.Kind != tc.kind || got.Retryable != tc.retryable || fmt.Sprint(got.Data) != fmt.Sprint(tc.data) {
			t.Errorf("%s: got %d %s retryable=%v %v, want %d %s retryable=%v %v", tc.name, got.Code, got.Kind, got.Retryable, got.Data, tc.code, tc.kind, tc.retryable, tc.data)
		}
	}
	if (&Agent{}).errorOf(nil, "s1", "") != nil {
		t.Error("no error maps to an error")
	}
}
