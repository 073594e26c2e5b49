package wire

import "encoding/json"

// peekType finds the `type` member of a JSON object without decoding the
// rest, so a union decoder can pick its variant with one scan. It returns a
// *DecodeError when the text is not an object, has no `type`, or `type` is
// not a string. Syntax errors after `type` are left to the full decode.
func peekType(data []byte) (string, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", &DecodeError{Msg: "expected a JSON object, got " + jsonKind(data)}
	}
	i++
	for {
		i = skipSpace(data, i)
		if i < len(data) && data[i] == '}' {
			break
		}
		if i >= len(data) || data[i] != '"' {
			return "", &DecodeError{Msg: "invalid JSON: expected a member name"}
		}
		end, escaped := scanString(data, i)
		if end < 0 {
			return "", &DecodeError{Msg: "invalid JSON: unterminated string"}
		}
		key := data[i+1 : end-1]
		isType := string(key) == "type"
		if escaped {
			var k string
			if json.Unmarshal(data[i:end], &k) == nil {
				isType = k == "type"
			}
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return "", &DecodeError{Msg: "invalid JSON: expected ':' after a member name"}
		}
		i = skipSpace(data, i+1)
		if isType {
			if i >= len(data) || data[i] != '"' {
				return "", &DecodeError{Field: "type", Msg: "expected a string, got " + jsonKind(data[i:])}
			}
			vend, vesc := scanString(data, i)
			if vend < 0 {
				return "", &DecodeError{Msg: "invalid JSON: unterminated string"}
			}
			if !vesc {
				return string(data[i+1 : vend-1]), nil
			}
			var s string
			if err := json.Unmarshal(data[i:vend], &s); err != nil {
				return "", &DecodeError{Field: "type", Msg: "invalid string"}
			}
			return s, nil
		}
		i = skipValue(data, i)
		if i < 0 {
			return "", &DecodeError{Msg: "invalid JSON"}
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i++
			continue
		}
		if i < len(data) && data[i] == '}' {
			break
		}
		return "", &DecodeError{Msg: "invalid JSON: expected ',' or '}'"}
	}
	return "", &DecodeError{Field: "type", Msg: "missing required field"}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index just past the string starting at data[i]
// (a quote), and whether it holds escapes; -1 when it does not end.
func scanString(data []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

// skipValue returns the index just past the JSON value at data[i], or -1.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		end, _ := scanString(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := scanString(data, j)
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
