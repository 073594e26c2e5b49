package acpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"zot.dev/zot/internal/jsonrpc"
)

// Text is an agent_message_chunk or agent_thought_chunk holding text
// alone, the update an answer streams by the thousand. It reaches the
// client decoded by hand (textChunk), not as an [Update].
type Text struct {
	SessionID string
	Text      string
	// Thought says it is the model's reasoning (agent_thought_chunk).
	Thought bool
}

func (Text) event() {}

// The frame of a text chunk up to each variable part, as zot's ACP
// server writes it (compact, members in this order).
const (
	textFramePrefix  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`
	textFrameKind    = `,"update":{"sessionUpdate":"`
	textFrameMessage = `agent_message_chunk`
	textFrameThought = `agent_thought_chunk`
	textFrameContent = `","content":{"type":"text","text":`
	textFrameEnd     = `}}}}`
)

// textChunk decodes msg when it is a session/update notification of a
// text chunk and nothing else, in the exact compact shape zot's server
// writes: its strings are checked as encoding/json would (valid UTF-8,
// no raw control characters, escapes decoded by encoding/json), so what
// it accepts is valid JSON that the full decoding would read the same.
// Any other message, or any other spelling of this one (spaces, members
// in another order, more members), is left to the full decoding (ok
// false).
func textChunk(msg []byte) (ev Text, ok bool) {
	rest, ok := bytes.CutPrefix(msg, []byte(textFramePrefix))
	if !ok {
		return Text{}, false
	}
	if ev.SessionID, rest, ok = jsonString(rest); !ok {
		return Text{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(textFrameKind)); !ok {
		return Text{}, false
	}
	switch {
	case bytes.HasPrefix(rest, []byte(textFrameMessage)):
		rest = rest[len(textFrameMessage):]
	case bytes.HasPrefix(rest, []byte(textFrameThought)):
		rest, ev.Thought = rest[len(textFrameThought):], true
	default:
		return Text{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(textFrameContent)); !ok {
		return Text{}, false
	}
	if ev.Text, rest, ok = jsonString(rest); !ok {
		return Text{}, false
	}
	if !bytes.Equal(rest, []byte(textFrameEnd)) {
		return Text{}, false
	}
	return ev, true
}

// jsonString reads the JSON string at the start of b and returns its
// value and what follows it. A string without escapes is checked here
// (valid UTF-8, no control character); one with escapes is decoded by
// encoding/json.
func jsonString(b []byte) (s string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	escaped := false
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			raw := b[:i+1]
			if escaped {
				if json.Unmarshal(raw, &s) != nil {
					return "", nil, false
				}
				return s, b[i+1:], true
			}
			if !utf8.Valid(raw) {
				return "", nil, false
			}
			return string(raw[1:i]), b[i+1:], true
		case c == '\\':
			escaped = true
			i++ // the escaped character, which may be a quote
		case c < 0x20:
			return "", nil, false
		}
	}
	return "", nil, false
}

// textTransport hands the text chunks it reads to deliver itself, on
// the connection's reader goroutine and in order with every other
// message, which it passes on: a streamed answer skips the connection's
// generic decoding (the envelope into a map, the params twice into the
// generated types). It works over any transport.
type textTransport struct {
	jsonrpc.Transport
	deliver func(Event)
}

// Read returns the next message that is not a text chunk.
func (t *textTransport) Read(ctx context.Context) ([]byte, error) {
	for {
		msg, err := t.Transport.Read(ctx)
		if err != nil {
			return msg, err
		}
		ev, ok := textChunk(msg)
		if !ok {
			return msg, nil
		}
		t.deliver(ev)
	}
}

// CloseRead passes the optional method on.
func (t *textTransport) CloseRead() error {
	if cr, ok := t.Transport.(interface{ CloseRead() error }); ok {
		return cr.CloseRead()
	}
	return fmt.Errorf("closing the input only: %w", errors.ErrUnsupported)
}

// Unread passes the optional method on.
func (t *textTransport) Unread() (int, bool) {
	if u, ok := t.Transport.(interface{ Unread() (int, bool) }); ok {
		return u.Unread()
	}
	return 0, false
}
