// Package jsonscan finds values in JSON text without decoding it: the
// span of a value, an object's member, an array's elements. It checks the
// structure it walks (strings, nesting, separators) but not the spelling
// of numbers and literals, which a full decoder checks when the value is
// decoded; a union decoder uses it to read a `type` before choosing a Go
// type, and a reader that needs one member of a large document uses it to
// skip the rest at memory speed.
package jsonscan

import (
	"encoding/json"
	"errors"
)

// ErrSyntax reports text whose structure is not JSON.
var ErrSyntax = errors.New("invalid JSON")

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// String returns the index just past the string starting at data[i] (a
// quote), and whether it holds escapes; -1 when it does not end.
func String(data []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			escaped = true
			j++ // the escaped byte
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

// Value returns the index just past the JSON value at data[i], or -1
// when there is none or it does not end.
func Value(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := String(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := String(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(data) {
		c := data[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// Member returns the text of the member name of the JSON object data, or
// nil when the object has none; of a name given twice, the first. It reads
// members up to the one it looks for. It returns ErrSyntax when data is
// not an object or is broken before that member ends.
func Member(data []byte, name string) ([]byte, error) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, ErrSyntax
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, ErrSyntax
		}
		end, escaped := String(data, i)
		if end < 0 {
			return nil, ErrSyntax
		}
		match := string(data[i+1:end-1]) == name
		if escaped {
			var s string
			match = json.Unmarshal(data[i:end], &s) == nil && s == name
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, ErrSyntax
		}
		i = SkipSpace(data, i+1)
		vend := Value(data, i)
		if vend < 0 {
			return nil, ErrSyntax
		}
		if match {
			return data[i:vend], nil
		}
		i = SkipSpace(data, vend)
		switch {
		case i < len(data) && data[i] == ',':
			i = SkipSpace(data, i+1)
		case i < len(data) && data[i] == '}':
			return nil, nil
		default:
			return nil, ErrSyntax
		}
	}
}

// Elements returns the text of each element of the JSON array data. It
// returns ErrSyntax when data is not an array or is broken.
func Elements(data []byte) ([][]byte, error) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, ErrSyntax
	}
	var out [][]byte
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return out, nil
	}
	for {
		end := Value(data, i)
		if end < 0 {
			return nil, ErrSyntax
		}
		out = append(out, data[i:end])
		i = SkipSpace(data, end)
		switch {
		case i < len(data) && data[i] == ',':
			i = SkipSpace(data, i+1)
		case i < len(data) && data[i] == ']':
			return out, nil
		default:
			return nil, ErrSyntax
		}
	}
}
