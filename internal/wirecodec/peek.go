package wirecodec

import (
	"encoding/json"

	"zot.dev/zot/internal/jsonscan"
)

// PeekType finds the `type` member of a JSON object without decoding the
// rest, so a union decoder can pick its variant with one scan. It returns a
// *DecodeError when the text is not an object, has no `type`, or `type` is
// not a string. Syntax errors after `type` are left to the full decode.
func PeekType(data []byte) (string, error) {
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", &DecodeError{Msg: "expected a JSON object, got " + JSONKind(data)}
	}
	i++
	for {
		i = jsonscan.SkipSpace(data, i)
		if i < len(data) && data[i] == '}' {
			break
		}
		if i >= len(data) || data[i] != '"' {
			return "", &DecodeError{Msg: "invalid JSON: expected a member name"}
		}
		end, escaped := jsonscan.String(data, i)
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
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return "", &DecodeError{Msg: "invalid JSON: expected ':' after a member name"}
		}
		i = jsonscan.SkipSpace(data, i+1)
		if isType {
			if i >= len(data) || data[i] != '"' {
				return "", &DecodeError{Field: "type", Msg: "expected a string, got " + JSONKind(data[i:])}
			}
			vend, vesc := jsonscan.String(data, i)
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
		i = jsonscan.Value(data, i)
		if i < 0 {
			return "", &DecodeError{Msg: "invalid JSON"}
		}
		i = jsonscan.SkipSpace(data, i)
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
