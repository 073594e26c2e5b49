// Package toolcache keeps the JSON encoding of a provider's tool list
// from one request to the next. The list is the same on every call of a
// session and its schemas are most of a short request's bytes; encoding
// them once saves the reflection and the validation of raw schema JSON
// that encoding/json repeats on every call.
package toolcache

import (
	"bytes"
	"slices"
	"sync"

	"zot.dev/zot/internal/llm"
)

// Cache holds the encoding of the last tool list seen. It is safe for
// concurrent use. The zero value is ready.
type Cache struct {
	mu    sync.Mutex
	tools []llm.ToolSpec // a deep copy of the list raw encodes
	raw   []byte
}

// Get returns the encoding of tools, calling encode only when the list
// differs from the last one.
func (c *Cache) Get(tools []llm.ToolSpec, encode func([]llm.ToolSpec) ([]byte, error)) ([]byte, error) {
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

// Splice adds `"field":raw` as the last member of the JSON object body.
// body must be an encoded object; raw is written as is.
func Splice(body []byte, field string, raw []byte) []byte {
	body = bytes.TrimRight(body, " \n")
	if len(body) < 2 || body[len(body)-1] != '}' {
		return body
	}
	out := make([]byte, 0, len(body)+len(field)+len(raw)+4)
	out = append(out, body[:len(body)-1]...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, field...)
	out = append(out, '"', ':')
	out = append(out, raw...)
	return append(out, '}')
}

// Append adds the encoded tool list to the JSON object body as its
// "tools" member, taking the encoding from c when the list has not
// changed (a nil c encodes every time). Without tools body is returned as
// is.
func Append(body []byte, tools []llm.ToolSpec, c *Cache, encode func([]llm.ToolSpec) ([]byte, error)) ([]byte, error) {
	if len(tools) == 0 {
		return body, nil
	}
	if c == nil {
		c = new(Cache)
	}
	raw, err := c.Get(tools, encode)
	if err != nil {
		return nil, err
	}
	return Splice(body, "tools", raw), nil
}
