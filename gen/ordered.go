package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// node is a JSON value that remembers the order of object keys, so that
// generated code lists properties in the order the schema gives them.
type node struct {
	// raw is the value's JSON text, compacted.
	raw json.RawMessage
	// keys and vals hold an object's members in document order; nil for
	// other kinds of values.
	keys []string
	vals map[string]*node
	// items holds an array's elements; nil for other kinds of values.
	items []*node
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
}

// parseNode decodes JSON text into a node tree.
func parseNode(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the top-level value")
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o', vals: map[string]*node{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := readNode(dec)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				if _, dup := n.vals[k]; dup {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				n.keys = append(n.keys, k)
				n.vals[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n.withRaw()
		case '[':
			n := &node{kind: 'a', items: []*node{}}
			for dec.More() {
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n.withRaw()
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		b, _ := json.Marshal(t)
		return &node{kind: 's', raw: b}, nil
	case json.Number:
		return &node{kind: 'n', raw: json.RawMessage(t.String())}, nil
	case bool:
		if t {
			return &node{kind: 'b', raw: json.RawMessage("true")}, nil
		}
		return &node{kind: 'b', raw: json.RawMessage("false")}, nil
	case nil:
		return &node{kind: 'z', raw: json.RawMessage("null")}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// withRaw fills raw for a container from its children, keeping key order.
func (n *node) withRaw() (*node, error) {
	var b bytes.Buffer
	if n.kind == 'o' {
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(n.vals[k].raw)
		}
		b.WriteByte('}')
	} else {
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(it.raw)
		}
		b.WriteByte(']')
	}
	n.raw = b.Bytes()
	return n, nil
}

// get returns the member k of an object node, or nil.
func (n *node) get(k string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	return n.vals[k]
}

// str returns the node's string value, or "" when it is not a string.
func (n *node) str() string {
	if n == nil || n.kind != 's' {
		return ""
	}
	var s string
	_ = json.Unmarshal(n.raw, &s)
	return s
}
