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
	f := make(jsonrpc.Frame, 0, len(updateHead)+len(method)+len(b)+1)
	if method == acp.MethodSessionUpdate {
		f = append(f, updateHead...)
	} else {
		f = append(f, jsonrpc.NotificationHead(method)...)
	}
	return append(append(f, b...), '}'), nil
}

// updateHead is what every session/update frame begins with, up to its
// params (jsonrpc.NotificationHead, which a test holds it to): the
// updates, most of what the agent sends, are framed without encoding it
// again. A constant, not a variable set by calling NotificationHead: that
// would be package initialisation, which every zot process runs.
const updateHead = `{"jsonrpc":"2.0","method":"session/update","params":`

// textFrame is the frame of an agent_message_chunk (thought: an
// agent_thought_chunk) holding text alone.
func (s *acpSession) textFrame(text string, thought bool) jsonrpc.Frame {
	return s.appendText(make([]byte, 0, s.textSize(text, thought)), text, thought)
}

// sendText queues a text chunk for one connection, encoded straight into
// its outgoing queue, without waiting: the frame of the common case, a
// session with one client, is neither allocated nor copied.
func (s *acpSession) sendText(c *conn, text string, thought bool) error {
	return c.c.PostFunc(s.textSize(text, thought), func(b []byte) []byte {
		return s.appendText(b, text, thought)
	})
}

// appendText appends the frame of a text chunk: the session's head of
// its kind, the text, and the closing of the params and the frame.
func (s *acpSession) appendText(b []byte, text string, thought bool) []byte {
	b = append(b, s.textHeads[textKind(thought)]...)
	b = wirecodec.AppendString(b, text)
	return append(b, "}}}}"...)
}

// textSize is about the length of a text chunk's frame, with room for
// some escapes.
func (s *acpSession) textSize(text string, thought bool) int {
	return len(s.textHeads[textKind(thought)]) + len(text) + len(text)/8 + 8
}

// textKind is the index of a text chunk's head in acpSession.textHeads.
func textKind(thought bool) int {
	if thought {
		return 1
	}
	return 0
}

// textHead returns the frame of a text chunk of session id up to the
// text's value (thought: of an agent_thought_chunk, else of an
// agent_message_chunk): a session's are made once, so neither the
// envelope nor the session id is encoded per chunk.
func textHead(id string, thought bool) []byte {
	kind := "agent_message_chunk"
	if thought {
		kind = "agent_thought_chunk"
	}
	b := append([]byte(nil), updateHead...)
	b = append(b, `{"sessionId":`...)
	b = wirecodec.AppendString(b, id)
	b = append(b, `,"update":{"sessionUpdate":"`...)
	b = append(b, kind...)
	return append(b, `","content":{"type":"text","text":`...)
}

// plainText reports whether c is a text chunk with nothing but its text.
func plainText(c *acp.ContentChunk) bool {
	b := c.Content
	return c.MessageID == "" && c.Meta == nil && b.Text != nil && b.Text.Annotations == nil && b.Text.Meta == nil &&
		b.Image == nil && b.Audio == nil && b.ResourceLink == nil && b.Resource == nil
}
