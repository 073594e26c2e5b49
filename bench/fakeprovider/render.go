package fakeprovider

import (
	"bytes"
	"encoding/json"
)

// model is the model name the fake provider reports in its answers.
const model = "zot-bench-fake"

// inputTokens is the prompt size every answer reports.
const inputTokens = 12

// toolArgsParts is the bash tool call's arguments, split in two the way a
// real provider streams them.
var toolArgsParts = []string{`{"command":`, ` "echo hi"}`}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		// A Go string always marshals; invalid UTF-8 is replaced.
		panic(err)
	}
	return string(b)
}

// eachDelta calls fn with the text of every delta of a text scenario.
func (sc scenario) eachDelta(fn func(string)) {
	if sc.deltas != nil {
		for _, d := range sc.deltas {
			fn(d)
		}
		return
	}
	for i := range sc.n {
		fn(deltaText(i))
	}
}

// count returns the number of text deltas of a text scenario.
func (sc scenario) count() int {
	if sc.deltas != nil {
		return len(sc.deltas)
	}
	return sc.n
}

// sizeHint estimates a rendered body's size so it is allocated once.
func (sc scenario) sizeHint() int { return 1024 + sc.count()*160 }

// newBody returns a buffer sized for sc's rendered body.
func newBody(sc scenario) *bytes.Buffer {
	return bytes.NewBuffer(make([]byte, 0, sc.sizeHint()))
}
