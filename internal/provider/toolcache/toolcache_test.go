package toolcache

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
)

func TestGetEncodesOnlyWhenTheListChanges(t *testing.T) {
	var c Cache
	calls := 0
	enc := func(ts []llm.ToolSpec) ([]byte, error) {
		calls++
		return json.Marshal(ts)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	list := []llm.ToolSpec{{Name: "read", Description: "reads", Schema: schema}}
	a, _ := c.Get(list, enc)
	b, _ := c.Get([]llm.ToolSpec{{Name: "read", Description: "reads", Schema: json.RawMessage(`{"type":"object"}`)}}, enc)
	if calls != 1 || string(a) != string(b) {
		t.Fatalf("equal lists encoded %d times", calls)
	}
	schema[9] = 'O' // the caller mutates its slice: the cache kept a copy
	if _, err := c.Get(list, enc); err != nil || calls != 2 {
		t.Fatalf("changed schema not re-encoded (calls %d)", calls)
	}
	c.Get([]llm.ToolSpec{{Name: "write"}}, enc)
	if calls != 3 {
		t.Fatal("a different list was not re-encoded")
	}
}

func TestSplice(t *testing.T) {
	cases := map[string]string{
		`{"a":1}`:     `{"a":1,"tools":[1]}`,
		`{}`:          `{"tools":[1]}`,
		"{\"a\":1}\n": `{"a":1,"tools":[1]}`,
	}
	for in, want := range cases {
		if got := string(Splice([]byte(in), "tools", []byte(`[1]`))); got != want {
			t.Errorf("Splice(%q) = %s, want %s", in, got, want)
		}
	}
}
