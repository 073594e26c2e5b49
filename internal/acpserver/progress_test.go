package acpserver

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestToolProgressIsAnUpdate: a running call's new output reaches the
// client as a tool_call_update of that call, the text in
// _meta.zot.output (to be appended: an update's content would replace
// the call's) and no content, status or title of its own.
func TestToolProgressIsAnUpdate(t *testing.T) {
	ups := (&turn{}).translate(&wire.ToolProgressEvent{ID: "call-1", Text: "building…\n"})
	if len(ups) != 1 || ups[0].ToolCallUpdate == nil {
		t.Fatalf("updates %+v, want one tool_call_update", ups)
	}
	u := ups[0].ToolCallUpdate
	if u.ToolCallID != "call-1" || u.Content != nil || u.Status != "" || u.Title != nil {
		t.Errorf("update %+v", u)
	}
	if got, _ := u.Meta["zot"].(map[string]any)["output"].(string); got != "building…\n" {
		t.Errorf("_meta %v, want zot.output %q", u.Meta, "building…\n")
	}
}
