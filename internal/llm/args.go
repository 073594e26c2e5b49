package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// maxArgsInError caps how much of unusable arguments ArgsError quotes.
const maxArgsInError = 2000

// ParseToolArgs validates the streamed arguments of a tool call, as every
// provider must: empty arguments are an empty object; anything that is not
// a JSON object yields "{}" and a message for the model that quotes what it
// sent (to set as ToolCallBlock.ArgsError), never a silent "{}". Valid
// arguments come back as sent, without surrounding space.
func ParseToolArgs(raw []byte) (json.RawMessage, string) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), ""
	}
	var probe json.RawMessage
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return json.RawMessage("{}"), fmt.Sprintf("tool arguments are not valid JSON (%v): %s", err, quote(trimmed))
	}
	if trimmed[0] != '{' {
		return json.RawMessage("{}"), fmt.Sprintf("tool arguments are not a JSON object: %s", quote(trimmed))
	}
	return json.RawMessage(bytes.Clone(trimmed)), ""
}

// quote returns b, shortened to at most maxArgsInError bytes on a rune boundary.
func quote(b []byte) string {
	if len(b) <= maxArgsInError {
		return string(b)
	}
	cut := maxArgsInError
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "…"
}
