package agent

import (
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// WireMessages returns msgs in their wire form, as Agent.Messages does
// for a transcript: for a door that reads a stored session (its file)
// without opening it.
func WireMessages(msgs []llm.Message) []wire.Message {
	out := make([]wire.Message, len(msgs))
	for i := range msgs {
		out[i] = wireMessage(&msgs[i])
	}
	return out
}

// WireMessage returns m in its wire form, as WireMessages does for one
// message: for a door that goes through a transcript a message at a
// time.
func WireMessage(m *llm.Message) wire.Message { return wireMessage(m) }
