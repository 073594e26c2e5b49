package acpserver

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestStepMadeAgainIsToldApart: a step's turn_start with an attempt (its
// model call made again after part of its answer was shown) becomes a
// note for display with the attempt in _meta.zot.attempt; the new
// attempt's text and thinking go as chunks with a messageId of their
// own; the next step's turn_start (no attempt) ends that.
func TestStepMadeAgainIsToldApart(t *testing.T) {
	tr := &turn{}
	if ups := tr.translate(&wire.TurnStartEvent{Step: 1}); len(ups) != 0 || tr.retry != "" {
		t.Fatalf("a first attempt's turn_start: updates %+v, retry %q; want none", ups, tr.retry)
	}
	two := int64(2)
	ups := tr.translate(&wire.TurnStartEvent{Step: 1, Attempt: &two})
	if len(ups) != 1 || ups[0].AgentMessageChunk == nil || ups[0].AgentMessageChunk.Content.Text == nil {
		t.Fatalf("updates %+v, want one agent_message_chunk", ups)
	}
	note := ups[0].AgentMessageChunk
	z, _ := note.Meta["zot"].(map[string]any)
	if z["action"] != "display" || z["attempt"] != two || note.MessageID != "" {
		t.Errorf("the note: _meta %v, messageId %q; want zot.action display and zot.attempt 2, no messageId", note.Meta, note.MessageID)
	}
	text, thought := tr.retried("Hi", false), tr.retried("hmm", true)
	if text.AgentMessageChunk == nil || text.AgentMessageChunk.Content.Text.Text != "Hi" || thought.AgentThoughtChunk == nil {
		t.Fatalf("the new attempt's chunks: %+v, %+v", text, thought)
	}
	id := text.AgentMessageChunk.MessageID
	if id == "" || thought.AgentThoughtChunk.MessageID != id {
		t.Errorf("messageIds %q and %q, want one of the attempt's own", id, thought.AgentThoughtChunk.MessageID)
	}
	tr.translate(&wire.TurnStartEvent{Step: 1, Attempt: &two})
	if tr.retry == string(id) {
		t.Errorf("another attempt kept the messageId %q", id)
	}
	if tr.translate(&wire.TurnStartEvent{Step: 2}); tr.retry != "" {
		t.Errorf("the next step keeps the messageId %q", tr.retry)
	}
}
