package sessionfile

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// A message with long texts is written exactly as json.Marshal writes
// its record, though its long texts are spliced in.
func TestLongTextsEncodeAsMarshalDoes(t *testing.T) {
	long := strings.Repeat("<a & \"b\"> \u2028 é \x01\n", 10000)
	m := llm.Message{Role: llm.RoleUser, Time: time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC), Content: []llm.Block{
		&llm.TextBlock{Text: "short"}, &llm.TextBlock{Text: long}, &llm.TextBlock{Text: long + "x"},
	}}
	got, err := encodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := encodeBlocks(m.Content)
	want, _ := json.Marshal(record{Role: string(m.Role), Time: m.Time, Content: content})
	if string(got) != string(want) {
		t.Fatalf("the spliced line differs from json.Marshal's (%d and %d bytes)", len(got), len(want))
	}
}
