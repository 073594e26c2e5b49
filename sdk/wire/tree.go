package wire

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"zot.dev/zot/internal/jsonscan"
)

// aliasMin is the length from which a tree's string value without escapes
// shares the bytes of the line instead of copying them. A variable so that
// the tests can make every string long.
var aliasMin = 256

// longValue is the length of the JSON text of a string value from which
// decodeTree lists it among the tree's long strings (see readLong).
var longValue = 64 << 10

// tree is a command line decoded as json.Decoder with UseNumber decodes
// it, and the long string values it holds.
type tree struct {
	v     any
	longs []longString
}

// longString is a string value of longValue bytes of JSON text or more:
// data[start:end] is its literal, quotes included, and s what it decodes
// to. When shared, s shares data's bytes.
type longString struct {
	start, end int
	s          string
	shared     bool
}

// decodeTree decodes data, which must be valid JSON (json.Valid), into the
// values json.Decoder with UseNumber gives: map[string]any, []any,
// string, json.Number, bool and nil. It decodes from data where it lies:
// no copy of the whole text is made first, and a string is decoded once,
// with one allocation.
//
// A string value of aliasMin bytes or more that holds no escape shares
// its bytes with data, so a command that is mostly one long text is not
// held twice while it is checked. The tree is therefore valid only while
// data is unchanged and must not outlive the call that reads it: nothing
// in it may be kept (keys and short strings are copies, long strings are
// not).
func decodeTree(data []byte) tree {
	var t tree
	t.v, _ = t.value(data, jsonscan.SkipSpace(data, 0))
	return t
}

// value decodes the value at data[i] and returns it with the index just
// past it.
func (t *tree) value(data []byte, i int) (any, int) {
	switch data[i] {
	case '{':
		m := map[string]any{}
		i = jsonscan.SkipSpace(data, i+1)
		if data[i] == '}' {
			return m, i + 1
		}
		for {
			end, _ := jsonscan.String(data, i)
			k, _ := treeString(data[i:end], false)
			i = jsonscan.SkipSpace(data, end)
			var v any
			v, i = t.value(data, jsonscan.SkipSpace(data, i+1)) // past ':'
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
			v, i = t.value(data, i)
			list = append(list, v)
			i = jsonscan.SkipSpace(data, i)
			if data[i] == ']' {
				return list, i + 1
			}
			i = jsonscan.SkipSpace(data, i+1)
		}
	case '"':
		end, _ := jsonscan.String(data, i)
		s, shared := treeString(data[i:end], true)
		if end-i >= longValue {
			t.longs = append(t.longs, longString{start: i, end: end, s: s, shared: shared})
		}
		return s, end
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

// treeString decodes the quoted string raw as encoding/json does, and
// reports whether the result shares raw's bytes: a value (share) of
// aliasMin bytes or more without escapes or bytes that are not UTF-8
// does.
func treeString(raw []byte, share bool) (string, bool) {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		if share && len(body) >= aliasMin {
			return unsafe.String(unsafe.SliceData(body), len(body)), true
		}
		return string(body), false
	}
	return unquote(body), false
}

// unquote decodes the body of a valid JSON string literal as encoding/json
// does (a bad escape or surrogate, or a byte that is not UTF-8, becomes
// U+FFFD) into a string made at its final size.
func unquote(body []byte) string {
	n := unquoteTo(nil, body)
	if n == 0 {
		return ""
	}
	b := make([]byte, n)
	unquoteTo(b, body)
	return unsafe.String(unsafe.SliceData(b), n)
}

// unquoteTo decodes body into b, which is nil or long enough, and returns
// the decoded length.
func unquoteTo(b, body []byte) int {
	w := 0
	put := func(c byte) {
		if b != nil {
			b[w] = c
		}
		w++
	}
	putRune := func(r rune) {
		if b != nil {
			utf8.EncodeRune(b[w:], r)
		}
		w += utf8.RuneLen(r)
	}
	for r := 0; r < len(body); {
		c := body[r]
		switch {
		case c == '\\':
			switch e := body[r+1]; e {
			case 'b':
				put('\b')
			case 'f':
				put('\f')
			case 'n':
				put('\n')
			case 'r':
				put('\r')
			case 't':
				put('\t')
			case 'u':
				rr := hex4(body[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) && r+6 <= len(body) && body[r] == '\\' && body[r+1] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(body[r+2:])); dec != unicode.ReplacementChar {
						putRune(dec)
						r += 6
						continue
					}
				}
				if utf16.IsSurrogate(rr) {
					rr = unicode.ReplacementChar
				}
				putRune(rr)
				continue
			default: // '"', '\\', '/'
				put(e)
			}
			r += 2
		case c < utf8.RuneSelf:
			put(c)
			r++
		default:
			rr, size := utf8.DecodeRune(body[r:])
			putRune(rr)
			r += size
		}
	}
	return w
}

// hex4 reads the four hex digits at the start of b, which a valid JSON
// string has after \u.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
