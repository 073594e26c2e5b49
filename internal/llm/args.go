package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// maxArgsInError caps how much of unusable arguments ArgsError quotes.
const maxArgsInError = 2000

// ParseToolArgs validates the streamed arguments of a tool call, as every
// provider must: empty arguments are an empty object; anything else that
// CheckToolArgs refuses yields "{}" and a message for the model that says
// what is wrong, and where, and quotes what it sent (to set as
// ToolCallBlock.ArgsError), never a silent "{}". Valid arguments come back
// as sent, without surrounding space.
func ParseToolArgs(raw []byte) (json.RawMessage, string) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), ""
	}
	if err := CheckToolArgs(trimmed); err != nil {
		return json.RawMessage("{}"), err.Error() + ": " + quote(trimmed)
	}
	return json.RawMessage(bytes.Clone(trimmed)), ""
}

// CheckToolArgs reports why raw cannot be the arguments of a tool call, or
// nil when it is one JSON object (surrounding white space aside) in which
// no object, at any depth, gives a member name twice. A repeated name is
// refused because decoders disagree on which value counts (encoding/json
// keeps the last): the call clients are shown, or an approver is asked
// about, must be the call that runs. Names are compared as encoding/json
// decodes them, escapes resolved. The error names the field at fault in
// JSON words.
func CheckToolArgs(raw []byte) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return errors.New("tool arguments are empty")
	}
	object := trimmed[0] == '{'
	var names [manyNames][]byte
	s := argScanner{data: trimmed, names: object, seen: names[:0]}
	switch err := s.scan(); {
	case err != nil && err.repeated:
		return fmt.Errorf("tool arguments give the %s", err)
	case err != nil:
		return fmt.Errorf("tool arguments are not valid JSON (%s)", err)
	case !object:
		return errors.New("tool arguments are not a JSON object")
	}
	return nil
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
