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
