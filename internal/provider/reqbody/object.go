package reqbody

import (
	"bytes"
	"encoding/json"
)

// AppendArray appends to b a JSON array of first (when not empty) and the
// non-empty fragments, each fragment being zero or more comma-separated
// JSON values.
func AppendArray(b, first []byte, frags [][]byte) []byte {
	return AppendArrayWith(b, first, frags, func(b []byte, _ int, f []byte) []byte { return append(b, f...) })
}

// AppendArrayWith is [AppendArray] with each non-empty fragment written
// by put, which appends to b what stands for fragment i (see
// [AppendGroupedWith]).
func AppendArrayWith(b, first []byte, frags [][]byte, put func(b []byte, i int, f []byte) []byte) []byte {
	b = append(b, '[')
	n := len(b)
	b = append(b, first...)
	for i, f := range frags {
		if len(f) == 0 {
			continue
		}
		if len(b) > n {
			b = append(b, ',')
		}
		b = put(b, i, f)
	}
	return append(b, ']')
}

// AppendGrouped appends to b a JSON array with one object
// {"role":R,"<member>":[...]} for each run of consecutive non-empty
// fragments whose messages have the same role R, holding the run's
// fragments as the member's elements. role gives the role of fragment i;
// it must need no JSON escaping, and so must member.
func AppendGrouped(b []byte, frags [][]byte, role func(i int) string, member string) []byte {
	return AppendGroupedWith(b, frags, role, member, func(b []byte, _ int, f []byte) []byte { return append(b, f...) })
}

// AppendGroupedWith is [AppendGrouped] with each non-empty fragment
// written by put, which appends to b what stands for fragment i (f, or
// what f stands for: a fragment encoded in place, or one with a member
// added to its last value).
func AppendGroupedWith(b []byte, frags [][]byte, role func(i int) string, member string, put func(b []byte, i int, f []byte) []byte) []byte {
	b = append(b, '[')
	prev := ""
	for i, f := range frags {
		if len(f) == 0 {
			continue
		}
		r := role(i)
		switch {
		case r == prev:
			b = append(b, ',')
		case prev != "":
			b = append(b, "]},"...)
			fallthrough
		default:
			b = append(b, `{"role":"`...)
			b = append(b, r...)
			b = append(b, `","`...)
			b = append(b, member...)
			b = append(b, `":[`...)
		}
		prev = r
		b = put(b, i, f)
	}
	if prev != "" {
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

// Body returns head, an encoded JSON object, with two members added in
// one new buffer: member, whose value appendList appends (writing at most
// size bytes, or the buffer grows), and "tools" with the encoded tool list
// tools when it is not nil.
func Body(head []byte, member string, size int, appendList func([]byte) []byte, tools []byte) []byte {
	return body(make([]byte, 0, bodySize(head, member, size, tools)), head, member, appendList, tools)
}

// bodySize is the room [Body] needs.
func bodySize(head []byte, member string, size int, tools []byte) int {
	return len(head) + len(member) + size + len(tools) + len(`,"":,"tools":}`)
}

// body is Body written into b, an empty buffer.
func body(b, head []byte, member string, appendList func([]byte) []byte, tools []byte) []byte {
	head = bytes.TrimRight(head, " \n")
	b = append(b, head[:len(head)-1]...)
	b = appendList(appendName(b, member))
	if tools != nil {
		b = append(appendName(b, "tools"), tools...)
	}
	return append(b, '}')
}

// appendName appends the name of the next member of an object being
// written, with its colon and the comma the member before it needs.
func appendName(b []byte, name string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// Size returns how many bytes [AppendArray] and [AppendGrouped] write at
// most for frags, besides a first element.
func Size(frags [][]byte) int {
	n := 2
	for _, f := range frags {
		n += len(f) + len(`]},{"role":"assistant","content":[`) + 1
	}
	return n
}

// Fragment encodes items as the elements of a JSON array without its
// brackets (comma-separated values), the form [AppendArray] and
// [AppendGrouped] join; nothing when there are no items.
func Fragment[T any](items []T) ([]byte, error) {
	if len(items) == 0 {
		return nil, nil
	}
	enc, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	return enc[1 : len(enc)-1], nil
}
