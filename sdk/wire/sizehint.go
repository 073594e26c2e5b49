package wire

import "zot.dev/zot/internal/wirecodec"

// hintFrom is the length of text below which SizeHint says nothing (0):
// a frame this small costs little to grow.
const hintFrom = 64 << 10

// SizeHint returns at least the length of e's encoding when its text is
// long, or 0 when it is short. A writer makes its buffer that size at
// once, so the echo of a long prompt is not encoded into a buffer that
// append grows by copying it over and over (several times its size in
// all, and the last two copies at once).
func (e *UserMessageEvent) SizeHint() int {
	n := 0
	for _, b := range e.Content {
		if t, ok := b.(*TextBlock); ok {
			n += wirecodec.StringLen(t.Text)
		}
	}
	if n < hintFrom {
		return 0
	}
	return n + len(e.Content)*128 + len(e.PromptID.raw) + 256
}
