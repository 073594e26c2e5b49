package acpagent

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
func (s *session) frame(it *item) (jsonrpc.Frame, error) {
	switch {
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
func (s *session) encodedFrame(v any) (jsonrpc.Frame, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding an update: %w", err)
	}
	return jsonrpc.NotificationFrame(acp.MethodSessionUpdate, len(b), func(f []byte) []byte { return append(f, b...) }), nil
}

// textFrame is the frame of an agent_message_chunk (thought: an
// agent_thought_chunk) holding text alone. It is carved out of the
// buffer reserve made for the batch being handed on, when it fits.
func (s *session) textFrame(text string, thought bool) jsonrpc.Frame {
	head := s.chunkHead(thought)
	params := func(b []byte) []byte {
		b = append(b, head...)
		b = wirecodec.AppendString(b, text)
		return append(b, "}}}"...)
	}
	size := textFrameSize(len(head), text)
	if cap(s.frames)-len(s.frames) < size {
		return jsonrpc.NotificationFrame(acp.MethodSessionUpdate, size, params)
	}
	start := len(s.frames)
	s.frames = jsonrpc.AppendNotification(s.frames, acp.MethodSessionUpdate, params)
	// Capped: nothing appended to the buffer later can reach into it.
	return s.frames[start:len(s.frames):len(s.frames)]
}

// textFrameSize is what a text chunk's frame takes, with room for some
// escapes, its params beginning with a head of headLen bytes.
func textFrameSize(headLen int, text string) int {
	return jsonrpc.FrameOverhead + len(acp.MethodSessionUpdate) + headLen + len(text) + len(text)/8 + 8
}

// chunkHead returns the params of a text chunk of the session up to the
// text's value, made once per session and kind: the session id is
// encoded once, not per chunk.
func (s *session) chunkHead(thought bool) []byte {
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

// reserve makes the buffer the text chunks of batch are carved out of:
// one allocation for the batch instead of one per chunk. The buffer is
// dropped after the batch (releaseFrames), so an idle session holds none.
func (s *session) reserve(batch []item) {
	size := 0
	for i := range batch {
		if it := &batch[i]; it.update == nil && it.note == nil && it.barrier == nil && it.text != "" {
			size += textFrameSize(len(s.chunkHead(it.thought)), it.text)
		}
	}
	if size > 0 {
		s.frames = make([]byte, 0, size)
	}
}

// releaseFrames drops the buffer of the batch handed on; its frames live on
// in the connections' queues until written.
func (s *session) releaseFrames() { s.frames = nil }

// plainText reports whether c is a text chunk with nothing but its text.
func plainText(c *acp.ContentChunk) bool {
	b := c.Content
	return c.MessageID == "" && c.Meta == nil && b.Text != nil && b.Text.Annotations == nil && b.Text.Meta == nil &&
		b.Image == nil && b.Audio == nil && b.ResourceLink == nil && b.Resource == nil
}
