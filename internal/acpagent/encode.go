package acpagent

import (
	"encoding/json"
	"fmt"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/wirecodec"
)

// params returns the params of the session/update that it stands for,
// encoded once for every connection it goes to. A text chunk of the
// agent's answer or thought, most of what a turn sends, is written
// straight into its bytes; the rest goes through encoding/json.
func (s *session) params(it *item) (jsonrpc.Encoded, error) {
	if it.update == nil {
		b, err := json.Marshal(it.note)
		if err != nil {
			return nil, fmt.Errorf("encoding an update: %w", err)
		}
		return b, nil
	}
	u := it.update
	kind, chunk := "", (*acp.ContentChunk)(nil)
	switch {
	case u.AgentMessageChunk != nil:
		kind, chunk = "agent_message_chunk", u.AgentMessageChunk
	case u.AgentThoughtChunk != nil:
		kind, chunk = "agent_thought_chunk", u.AgentThoughtChunk
	}
	if chunk != nil && plainText(chunk) {
		text := chunk.Content.Text.Text
		b := make([]byte, 0, 96+len(s.id)+wirecodec.StringLen(text))
		b = append(b, `{"sessionId":`...)
		b = wirecodec.AppendString(b, s.id)
		b = append(b, `,"update":{"sessionUpdate":"`...)
		b = append(b, kind...)
		b = append(b, `","content":{"type":"text","text":`...)
		b = wirecodec.AppendString(b, text)
		return append(b, "}}}"...), nil
	}
	b, err := json.Marshal(acp.SessionNotification{SessionID: acp.SessionId(s.id), Update: *u})
	if err != nil {
		return nil, fmt.Errorf("encoding an update: %w", err)
	}
	return b, nil
}

// plainText reports whether c is a text chunk with nothing but its text.
func plainText(c *acp.ContentChunk) bool {
	b := c.Content
	return c.MessageID == "" && c.Meta == nil && b.Text != nil && b.Text.Annotations == nil && b.Text.Meta == nil &&
		b.Image == nil && b.Audio == nil && b.ResourceLink == nil && b.Resource == nil
}
