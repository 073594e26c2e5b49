package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes the JSON string that starts at data[i] (a quote) and
// returns its text and the index just past it. It declines (ok false)
// whatever a full decoder might read differently or reject: invalid
// UTF-8 (encoding/json would replace it), a control byte, a surrogate
// escape, an unknown escape, a string without its end. A fast reader
// that declines leaves the value to the full decoder.
func Unquote(data []byte, i int) (s string, end int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	// The common case: no escape, no control byte, ASCII or valid UTF-8.
	for j := start; j < len(data); j++ {
		c := data[j]
		switch {
		case c == '"':
			raw := data[start:j]
			if !utf8.Valid(raw) {
				return "", 0, false
			}
			return string(raw), j + 1, true
		case c == '\\':
			return unescape(data, start)
		case c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

// unescape is Unquote for a string that holds escapes, from its first
// byte.
func unescape(data []byte, start int) (string, int, bool) {
	out := make([]byte, 0, 64)
	for j := start; j < len(data); {
		c := data[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", 0, false
			}
			return string(out), j + 1, true
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(data) {
			return "", 0, false
		}
		switch e := data[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(data, j+2)
			if !ok || utf16.IsSurrogate(r) {
				return "", 0, false // surrogates: the full decoder decides
			}
			out = utf8.AppendRune(out, r)
			j += 6
			continue
		default:
			return "", 0, false
		}
		j += 2
	}
	return "", 0, false
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
