package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// toolArgs turns streamed argument text into a call's Args, as real
// providers do: empty text is an empty object, and text that is not a JSON
// object becomes "{}" with a message for the model quoting what it sent.
func toolArgs(s string) (json.RawMessage, string) {
	raw := bytes.TrimSpace([]byte(s))
	if len(raw) == 0 {
		return json.RawMessage("{}"), ""
	}
	if !json.Valid(raw) {
		var probe any
		err := json.Unmarshal(raw, &probe)
		return json.RawMessage("{}"), fmt.Sprintf("tool arguments are not valid JSON (%v): %s", err, raw)
	}
	if raw[0] != '{' {
		return json.RawMessage("{}"), fmt.Sprintf("tool arguments are not a JSON object: %s", raw)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return json.RawMessage("{}"), fmt.Sprintf("tool arguments are not valid JSON (%v): %s", err, raw)
	}
	return json.RawMessage(buf.Bytes()), ""
}
