package reqbody

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
)

func TestGetEncodesOnlyWhenTheListChanges(t *testing.T) {
	var c ToolCache
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

func TestToolsWithoutList(t *testing.T) {
	raw, err := Tools(nil, new(ToolCache), func([]llm.ToolSpec) ([]byte, error) {
		t.Fatal("encode called without tools")
		return nil, nil
	})
	if raw != nil || err != nil {
		t.Errorf("Tools(nil) = %q, %v", raw, err)
	}
	raw, err = Tools([]llm.ToolSpec{{Name: "a"}}, nil, func(ts []llm.ToolSpec) ([]byte, error) { return json.Marshal(ts) })
	if err != nil || string(raw) != `[{"Name":"a","Description":"","Schema":null}]` {
		t.Errorf("Tools without a cache = %s, %v", raw, err)
	}
}
