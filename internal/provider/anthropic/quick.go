package anthropic

import (
	"bytes"

	"zot.dev/zot/internal/jsonscan"
)

// The start of a content_block_delta event as the Messages API writes it.
var (
	deltaHead = []byte(`{"type":"content_block_delta","index":`)
	deltaOpen = []byte(`,"delta":{"type":"`)
	deltaTail = []byte(`}}`)
)

// quickDeltas are the deltas quickDelta reads: each type's text member.
var quickDeltas = []struct {
	kind string
	head []byte // the rest of the delta up to its value
}{
	{"text_delta", []byte(`text_delta","text":`)},
	{"thinking_delta", []byte(`thinking_delta","thinking":`)},
	{"input_json_delta", []byte(`input_json_delta","partial_json":`)},
}

// quickDelta reads a content_block_delta event written the way the
// Messages API writes it, which is most of the events of an answer:
//
//	{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}
//
// with a text, thinking or input JSON delta, its members in that order,
// no white space, an index of at most four digits. It returns the index,
// the delta's type and its value (the text, the thinking, the partial
// JSON). It reports false for anything else, which encoding/json then
// reads: the two agree on what this accepts (FuzzQuickDelta).
func quickDelta(data []byte) (index int, kind, value string, ok bool) {
	if !bytes.HasPrefix(data, deltaHead) {
		return 0, "", "", false
	}
	i := len(deltaHead)
	digits := 0
	for ; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		if digits == 4 || (digits == 1 && index == 0) {
			return 0, "", "", false // too long, or a leading zero
		}
		index = index*10 + int(data[i]-'0')
		digits++
	}
	if digits == 0 || !bytes.HasPrefix(data[i:], deltaOpen) {
		return 0, "", "", false
	}
	i += len(deltaOpen)
	for _, q := range quickDeltas {
		if !bytes.HasPrefix(data[i:], q.head) {
			continue
		}
		v, end, ok := jsonscan.Unquote(data, i+len(q.head))
		if !ok || !bytes.Equal(data[end:], deltaTail) {
			return 0, "", "", false
		}
		return index, q.kind, v, true
	}
	return 0, "", "", false
}
