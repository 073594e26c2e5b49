package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"zot.dev/zot/internal/schemacheck"
)

func TestUnionRoundTrip(t *testing.T) {
	u := SessionUpdate{ToolCallUpdate: &ToolCallUpdate{ToolCallID: "c1", Status: ToolCallStatusCompleted,
		Content: []ToolCallContent{{Diff: &Diff{Path: "/a", NewText: "x"}}}}}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"diff","path":"/a","newText":"x"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if err := schemacheck.ValidateRPCDef("acp/schema.json", "SessionUpdate", b); err != nil {
		t.Error(err)
	}
	var back SessionUpdate
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ToolCallUpdate == nil || back.ToolCallUpdate.Content[0].Diff == nil || back.ToolCallUpdate.Content[0].Diff.NewText != "x" {
		t.Errorf("decoded %+v", back)
	}
}

func TestUnionDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, in, errText string
		check             func(t *testing.T, v any)
	}{
		{name: "unknown discriminator is refused", in: `{"sessionUpdate":"weather","x":1}`, errText: `unknown sessionUpdate "weather"`},
		{name: "missing discriminator is refused", in: `{"content":{"type":"text","text":"x"}}`, errText: `member "sessionUpdate" is missing`},
		{name: "not an object", in: `[1]`, errText: "SessionUpdate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var u SessionUpdate
			err := json.Unmarshal([]byte(tc.in), &u)
			if err == nil || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("error %v, want one with %q", err, tc.errText)
			}
		})
	}
	// A variant without the discriminator: stdio MCP servers carry no type.
	var m McpServer
	if err := json.Unmarshal([]byte(`{"name":"fs","command":"srv","args":[],"env":[]}`), &m); err != nil || m.Stdio == nil || m.Stdio.Command != "srv" {
		t.Errorf("stdio server: %+v %v", m, err)
	}
	if err := json.Unmarshal([]byte(`{"type":"http","name":"h","url":"http://x","headers":[]}`), &m); err != nil || m.HTTP == nil || m.Stdio != nil {
		t.Errorf("http server: %+v %v", m, err)
	}
	// An open union keeps a variant it does not know as JSON.
	var o MultiSelectItems
	if err := json.Unmarshal([]byte(`{"type":"_custom","x":1}`), &o); err != nil || string(o.Other) != `{"type":"_custom","x":1}` {
		t.Errorf("open union: %+v %v", o, err)
	}
	if _, err := json.Marshal(SessionUpdate{}); err == nil {
		t.Error("a union with no variant set encoded")
	}
	// A required array is [] when nil.
	b, _ := json.Marshal(ListSessionsResponse{})
	if string(b) != `{"sessions":[]}` {
		t.Errorf("empty list: %s", b)
	}
}

func TestErrorKinds(t *testing.T) {
	if ErrorKindBusy.Code() != 1001 || !ErrorKindBusy.Retryable() {
		t.Errorf("busy: %d %v", ErrorKindBusy.Code(), ErrorKindBusy.Retryable())
	}
	if ErrorKindInvalidParams.Code() != -32602 || ErrorKindInvalidParams.Retryable() {
		t.Error("invalid_params")
	}
	if ErrorKind("nope").Code() != 0 {
		t.Error("an unknown kind has a code")
	}
}
