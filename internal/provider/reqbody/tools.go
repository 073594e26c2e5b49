package reqbody

import (
	"bytes"
	"slices"
	"sync"

	"zot.dev/zot/internal/llm"
)

// ToolCache holds the encoding of the last tool list seen. It is safe for
// concurrent use. The zero value is ready.
type ToolCache struct {
	mu    sync.Mutex
	tools []llm.ToolSpec // a deep copy of the list raw encodes
	raw   []byte
}

// Get returns the encoding of tools, calling encode only when the list
// differs from the last one.
func (c *ToolCache) Get(tools []llm.ToolSpec, encode func([]llm.ToolSpec) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != nil && same(c.tools, tools) {
		return c.raw, nil
	}
	raw, err := encode(tools)
	if err != nil {
		return nil, err
	}
	c.tools = make([]llm.ToolSpec, len(tools))
	for i, t := range tools {
		t.Schema = slices.Clone(t.Schema)
		c.tools[i] = t
	}
	c.raw = raw
	return raw, nil
}

func same(a, b []llm.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Schema, b[i].Schema) {
			return false
		}
	}
	return true
}

// Tools returns the encoding of tools, taken from c when the list has not
// changed (a nil c encodes every time), or nil when there are no tools.
func Tools(tools []llm.ToolSpec, c *ToolCache, encode func([]llm.ToolSpec) ([]byte, error)) ([]byte, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	if c == nil {
		c = new(ToolCache)
	}
	return c.Get(tools, encode)
}
