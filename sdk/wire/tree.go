package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
	"unsafe"

	"zot.dev/zot/internal/jsonscan"
)

// aliasMin is the length from which decodeTree lets a string value share
// the bytes of the line instead of copying them.
const aliasMin = 256

// decodeTree decodes data, which must be valid JSON (json.Valid), into the
// values json.Decoder with UseNumber gives: map[string]any, []any,
// string, json.Number, bool and nil. It decodes from data where it lies:
// no copy of the whole text is made first.
//
// A string value of aliasMin bytes or more that holds no escape shares
// its bytes with data, so a command that is mostly one long text is not
// held twice while it is checked. The tree is therefore valid only while
// data is unchanged and must not outlive the call that reads it: nothing
// in it may be kept (keys and short strings are copies, long strings are
// not).
func decodeTree(data []byte) any {
	v, _ := treeValue(data, jsonscan.SkipSpace(data, 0))
	return v
}

// treeValue decodes the value at data[i] and returns it with the index
// just past it.
func treeValue(data []byte, i int) (any, int) {
	switch data[i] {
	case '{':
		m := map[string]any{}
		i = jsonscan.SkipSpace(data, i+1)
		if data[i] == '}' {
			return m, i + 1
		}
		for {
			end, _ := jsonscan.String(data, i)
			k := treeString(data[i:end], false)
			i = jsonscan.SkipSpace(data, end)
			var v any
			v, i = treeValue(data, jsonscan.SkipSpace(data, i+1)) // past ':'
			m[k] = v
			i = jsonscan.SkipSpace(data, i)
			if data[i] == '}' {
				return m, i + 1
			}
			i = jsonscan.SkipSpace(data, i+1) // past ','
		}
	case '[':
		list := []any{}
		i = jsonscan.SkipSpace(data, i+1)
		if data[i] == ']' {
			return list, i + 1
		}
		for {
			var v any
			v, i = treeValue(data, i)
			list = append(list, v)
			i = jsonscan.SkipSpace(data, i)
			if data[i] == ']' {
				return list, i + 1
			}
			i = jsonscan.SkipSpace(data, i+1)
		}
	case '"':
		end, _ := jsonscan.String(data, i)
		return treeString(data[i:end], true), end
	case 't':
		return true, i + len("true")
	case 'f':
		return false, i + len("false")
	case 'n':
		return nil, i + len("null")
	}
	end := i
	for end < len(data) && isNumberByte(data[end]) {
		end++
	}
	return json.Number(data[i:end]), end
}

// isNumberByte reports whether c can appear in a JSON number.
func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// treeString decodes the quoted string raw as encoding/json does. A long
// value without escapes (alias) shares raw's bytes; anything with an
// escape or bytes that are not UTF-8 (which encoding/json replaces) is
// decoded by encoding/json itself, so the two cannot differ.
func treeString(raw []byte, alias bool) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		if alias && len(body) >= aliasMin {
			return unsafe.String(unsafe.SliceData(body), len(body))
		}
		return string(body)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // raw is a valid JSON string
	return s
}
