package acpserver

import (
	"encoding/json"
	"fmt"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/wirecodec"
)

// frame returns the session/update notification that it stands for,
// encoded once for every connection it goes to. A text chunk of the
// agent's answer or thought, most of what a turn sends, is written
// straight into the frame's bytes; the rest goes through encoding/json.
func (s *acpSession) frame(it *item) (jsonrpc.Frame, error) {
	switch {
	case it.note != nil && it.method != "":
		return encodedNotification(it.method, it.note)
	case it.note != nil:
		return s.encodedFrame(it.note)
	case it.update == nil:
		return s.textFrame(it.text, it.thought), nil
	}
	u := it.update
	switch {
	case u.AgentMessageChunk != nil && plainText(u.AgentMessageChunk):
		return s.textFrame(u.AgentMessageChunk.Content.Text.Text, false), nil
	case u.AgentThoughtChunk != nil && plainText(u.AgentThoughtChunk):
		return s.textFrame(u.AgentThoughtChunk.Content.Text.Text, true), nil
	}
	return s.encodedFrame(acp.SessionNotification{SessionID: acp.SessionId(s.id), Update: *u})
}

// encodedFrame is the frame of a session/update whose params are v,
// encoded with encoding/json.
func (s *acpSession) encodedFrame(v any) (jsonrpc.Frame, error) {
	return encodedNotification(acp.MethodSessionUpdate, v)
}

// encodedNotification is the frame of a notification of method whose
// params are v, encoded with encoding/json.
func encodedNotification(method string, v any) (jsonrpc.Frame, error) {
	b, err := json.Marshal(v)
	if err != nil {
		if method == acp.MethodSessionUpdate {
			return nil, fmt.Errorf("encoding an update: %w", err)
		}
		return nil, fmt.Errorf("encoding a %s notification: %w", method, err)
	}
	return jsonrpc.NotificationFrame(method, len(b), func(f []byte) []byte { return append(f, b...) }), nil
}

// textFrame is the frame of an agent_message_chunk (thought: an
// agent_thought_chunk) holding text alone.
func (s *acpSession) textFrame(text string, thought bool) jsonrpc.Frame {
	return jsonrpc.NotificationFrame(acp.MethodSessionUpdate, s.textParamsSize(text, thought), func(b []byte) []byte {
		return s.appendTextParams(b, text, thought)
	})
}

// sendText sends a text chunk to one connection, encoded straight into
// its outgoing queue: the frame of the common case, a session with one
// client, is neither allocated nor copied.
func (s *acpSession) sendText(c *conn, text string, thought bool) error {
	return c.c.SendNotification(s.agent.ctx, acp.MethodSessionUpdate, s.textParamsSize(text, thought), func(b []byte) []byte {
		return s.appendTextParams(b, text, thought)
	})
}

// appendTextParams appends the params of a text chunk.
func (s *acpSession) appendTextParams(b []byte, text string, thought bool) []byte {
	b = append(b, s.chunkHead(thought)...)
	b = wirecodec.AppendString(b, text)
	return append(b, "}}}"...)
}

// textParamsSize is about the length of a text chunk's params, with room
// for some escapes.
func (s *acpSession) textParamsSize(text string, thought bool) int {
	return len(s.chunkHead(thought)) + len(text) + len(text)/8 + 8
}

// chunkHead returns the params of a text chunk of the session up to the
// text's value, made once per session and kind: the session id is
// encoded once, not per chunk. Only the forwarder calls it.
func (s *acpSession) chunkHead(thought bool) []byte {
	k := 0
	kind := "agent_message_chunk"
	if thought {
		k, kind = 1, "agent_thought_chunk"
	}
	if s.heads[k] == nil {
		b := wirecodec.AppendString([]byte(`{"sessionId":`), s.id)
		b = append(b, `,"update":{"sessionUpdate":"`...)
		b = append(b, kind...)
		s.heads[k] = append(b, `","content":{"type":"text","text":`...)
	}
	return s.heads[k]
}

// plainText reports whether c is a text chunk with nothing but its text.
func plainText(c *acp.ContentChunk) bool {
	b := c.Content
	return c.MessageID == "" && c.Meta == nil && b.Text != nil && b.Text.Annotations == nil && b.Text.Meta == nil &&
		b.Image == nil && b.Audio == nil && b.ResourceLink == nil && b.Resource == nil
}
