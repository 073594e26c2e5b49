package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"zot.dev/zot/internal/wirecodec"
)

// Request is one incoming request or notification.
type Request struct {
	// ID is the id as the client wrote it, a JSON number or string; nil
	// for a notification.
	ID json.RawMessage
	// Method is the method's name.
	Method string
	// Params is the params member as sent (an object or an array), nil
	// when absent.
	Params json.RawMessage
}

// IsNotification reports whether the message expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// response is an incoming answer to one of the Conn's own calls.
type response struct {
	id     json.RawMessage
	result json.RawMessage
	err    *Error
}

// parsed is what one line holds: a request, a response, or the error to
// answer with (and the id to answer to, null when unknown).
type parsed struct {
	req  *Request
	resp *response
	fail *Error
	id   json.RawMessage
	// quiet is set when fail concerns a notification: it is logged,
	// never answered.
	quiet bool
}

// nullID is the id of answers to lines whose id could not be read.
var nullID = json.RawMessage("null")

// rawRef is a member's value as it stands in the line, not a copy.
type rawRef []byte

// UnmarshalJSON keeps b itself.
func (r *rawRef) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// parse reads one message, which it keeps: the long members (params,
// result) are slices of it. Decoding is case-sensitive: "Method" is not
// "method".
func parse(line []byte) parsed {
	if !utf8.Valid(line) {
		return parsed{fail: NewError(CodeParseError, KindInvalidUTF8, "the line is not valid UTF-8"), id: nullID}
	}
	trimmed := bytes.TrimLeft(line, " \t\r")
	if len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed) {
		return parsed{fail: NewError(CodeInvalidRequest, KindInvalidRequest, "batches are not supported: send one message per line"), id: nullID}
	}
	var m map[string]rawRef
	if err := json.Unmarshal(line, &m); err != nil || m == nil {
		if json.Valid(line) {
			return parsed{fail: NewError(CodeInvalidRequest, KindInvalidRequest, "a message is a JSON object, got %s", wirecodec.JSONKind(trimmed)), id: nullID}
		}
		return parsed{fail: NewError(CodeParseError, KindMalformedJSON, "the line is not JSON: %v", err), id: nullID}
	}
	idRaw0, hasID := m["id"]
	idRaw := json.RawMessage(idRaw0)
	id := nullID
	if hasID {
		if !validID(idRaw) {
			return parsed{fail: invalidRequest("id", "must be a string or a number, got %s", wirecodec.JSONKind(idRaw)), id: nullID}
		}
		id = compact(idRaw)
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return parsed{fail: invalidRequest("jsonrpc", `must be "2.0"`), id: id}
	}
	methodRaw, hasMethod := m["method"]
	if !hasMethod {
		res0, hasResult := m["result"]
		res := json.RawMessage(res0)
		errRaw, hasError := m["error"]
		if !hasResult && !hasError {
			return parsed{fail: invalidRequest("method", "is missing"), id: id}
		}
		if !hasID || hasResult == hasError {
			// A malformed answer is never answered: that could complete
			// an unrelated call of the client's or start a loop.
			return parsed{}
		}
		r := &response{id: id, result: res}
		if hasError {
			r.result = nil
			r.err = new(Error)
			if err := json.Unmarshal(errRaw, r.err); err != nil {
				r.err = NewError(CodeInternal, KindInternal, "the client answered with an unreadable error: %v", err)
			}
		}
		return parsed{resp: r}
	}
	var method string
	if err := json.Unmarshal(methodRaw, &method); err != nil {
		return parsed{fail: invalidRequest("method", "must be a string, got %s", wirecodec.JSONKind(methodRaw)), id: id}
	}
	if method == "" {
		return parsed{fail: invalidRequest("method", "must not be empty"), id: id}
	}
	req := &Request{Method: method}
	if hasID {
		req.ID = id
	}
	if p0, ok := m["params"]; ok {
		p := bytes.TrimSpace(json.RawMessage(p0))
		if k := wirecodec.JSONKind(p); k != "object" && k != "array" {
			return parsed{fail: InvalidParams("params", "must be an object or an array, got %s", k), id: id, quiet: !hasID}
		}
		req.Params = p
	}
	return parsed{req: req}
}

// invalidRequest is a -32600 error naming the envelope's field.
func invalidRequest(field, format string, args ...any) *Error {
	e := NewError(CodeInvalidRequest, KindInvalidRequest, field+" "+format, args...)
	return e.With("field", field)
}

// validID reports whether raw is a JSON string or number.
func validID(raw json.RawMessage) bool {
	k := wirecodec.JSONKind(bytes.TrimSpace(raw))
	return k == "string" || k == "number"
}

// compact returns raw without insignificant white space, so one id
// written two ways is one key.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// Frames are built by hand: the envelope's member order is fixed, and the
// payload is already JSON.

func resultFrame(id, result json.RawMessage) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func errorFrame(id json.RawMessage, e *Error) []byte {
	raw, err := json.Marshal(e)
	if err != nil {
		raw, _ = json.Marshal(Internal(err))
	}
	b := make([]byte, 0, 40+len(id)+len(raw))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, raw...)
	return append(b, '}')
}

func requestFrame(id json.RawMessage, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 48+len(id)+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if id != nil {
		b = append(b, `,"id":`...)
		b = append(b, id...)
	}
	b = append(b, `,"method":`...)
	b = wirecodec.AppendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// marshal encodes a payload; json.RawMessage is kept as is (nil is null).
func marshal(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case Encoded:
		if x == nil {
			return json.RawMessage("null"), nil
		}
		return json.RawMessage(x), nil
	case json.RawMessage:
		if x == nil {
			return json.RawMessage("null"), nil
		}
		if !json.Valid(x) {
			return nil, fmt.Errorf("encoding a payload: raw JSON is not valid")
		}
		return compact(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding a payload: %w", err)
	}
	return b, nil
}
