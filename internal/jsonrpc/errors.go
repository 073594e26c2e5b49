package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
)

// Error codes zot's dispatcher answers with. Applications add their own
// codes outside the ranges JSON-RPC (-32768 to -32000) and ACP (-32800)
// reserve.
const (
	// CodeParseError: the line is not JSON (kind malformed_json) or not
	// UTF-8 (kind invalid_utf8). Answered with id null.
	CodeParseError = -32700
	// CodeInvalidRequest: the JSON is not a request (kind
	// invalid_request), or the line is over the limit (kind
	// line_too_long, id null).
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: no such method (kind unknown_method).
	CodeMethodNotFound = -32601
	// CodeInvalidParams: params are wrong (kind invalid_params); data.field
	// names the offending field.
	CodeInvalidParams = -32602
	// CodeInternal: a fault inside zot (kind internal).
	CodeInternal = -32603
	// CodeCancelled: the request was cancelled by $/cancel_request (kind
	// cancelled); ACP's RequestCancelled.
	CodeCancelled = -32800
	// CodeTooManyRequests: the connection has Options.MaxInFlight
	// requests under way (kind too_many_requests, retryable).
	CodeTooManyRequests = 1006
)

// Kinds of the errors the dispatcher itself answers with (data.kind).
const (
	KindMalformedJSON   = "malformed_json"
	KindInvalidUTF8     = "invalid_utf8"
	KindInvalidRequest  = "invalid_request"
	KindLineTooLong     = "line_too_long"
	KindUnknownMethod   = "unknown_method"
	KindInvalidParams   = "invalid_params"
	KindInternal        = "internal"
	KindCancelled       = "cancelled"
	KindTooManyRequests = "too_many_requests"
)

// ErrClosed is the cause of a call or send on a connection that has ended.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ErrNotSent is matched by the error of a Call whose request never
// reached the outgoing queue (the connection had ended, or ctx had): the
// client cannot have seen it. A call that fails without it may have
// reached the client, which may have acted on it before it left.
var ErrNotSent = errors.New("jsonrpc: the request was not sent")

// ErrStalled ends a connection whose client read nothing while its
// outgoing queue stayed full for Options.StallTimeout.
var ErrStalled = errors.New("jsonrpc: client stopped reading: outgoing queue full")

// Error is a JSON-RPC error object. On the wire, data holds kind and
// retryable and the entries of Data:
//
//	{"code":-32602,"message":"…","data":{"kind":"invalid_params","retryable":false,"field":"cwd"}}
//
// A Handler answers with an Error by returning it (wrapped or not; the
// outermost *Error found with errors.As is sent); any other error is
// sent as CodeInternal. Errors from Conn.Call that the client answered
// are *Error too. Two Errors match with errors.Is when their codes are
// equal and, if the target has a Kind, their kinds are.
type Error struct {
	Code    int64
	Message string
	// Kind is data.kind: a stable snake_case string clients branch on.
	Kind string
	// Retryable is data.retryable: the same request may succeed later.
	Retryable bool
	// Data holds further members of data, e.g. "field". Entries named
	// kind or retryable are overridden by the fields above.
	Data map[string]any
}

// NewError returns an Error of code and kind with a formatted message.
func NewError(code int64, kind, format string, args ...any) *Error {
	return &Error{Code: code, Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns a -32602 error naming the offending field (a
// JSON path: "cwd", "prompt[0].type"; "params" for the whole value).
func InvalidParams(field, format string, args ...any) *Error {
	e := NewError(CodeInvalidParams, KindInvalidParams, format, args...)
	if field != "" {
		e.Message = field + ": " + e.Message
		e.Data = map[string]any{"field": field}
	}
	return e
}

// MethodNotFound returns the -32601 error for method.
func MethodNotFound(method string) *Error {
	e := NewError(CodeMethodNotFound, KindUnknownMethod, "unknown method %q", method)
	e.Data = map[string]any{"method": method}
	return e
}

// Internal returns the -32603 error for err.
func Internal(err error) *Error {
	return NewError(CodeInternal, KindInternal, "%v", err)
}

// WithRetryable sets Retryable and returns e.
func (e *Error) WithRetryable(r bool) *Error {
	e.Retryable = r
	return e
}

// With adds key and value to Data and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Data == nil {
		e.Data = make(map[string]any)
	}
	e.Data[key] = value
	return e
}

// Error returns the code, the kind when there is one, and the message.
func (e *Error) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("jsonrpc error %d (%s): %s", e.Code, e.Kind, e.Message)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error of the same code and, when
// target has a kind, the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Kind == "" || t.Kind == e.Kind)
}

// wireError is an Error as JSON.
type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// MarshalJSON writes the error object with data.kind and data.retryable.
func (e *Error) MarshalJSON() ([]byte, error) {
	data := make(map[string]any, len(e.Data)+2)
	maps.Copy(data, e.Data)
	data["kind"] = e.Kind
	if e.Kind == "" {
		data["kind"] = KindInternal
	}
	data["retryable"] = e.Retryable
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encoding the data of error %d: %w", e.Code, err)
	}
	return json.Marshal(wireError{Code: e.Code, Message: e.Message, Data: raw})
}

// UnmarshalJSON reads an error object; data.kind and data.retryable go
// to Kind and Retryable when present, the rest of an object data to Data
// (a data that is not an object is kept under Data["data"]).
func (e *Error) UnmarshalJSON(b []byte) error {
	var w wireError
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Error{Code: w.Code, Message: w.Message}
	if len(w.Data) == 0 || string(w.Data) == "null" {
		return nil
	}
	var data map[string]any
	if json.Unmarshal(w.Data, &data) != nil {
		var v any
		if err := json.Unmarshal(w.Data, &v); err != nil {
			return err
		}
		e.Data = map[string]any{"data": v}
		return nil
	}
	if k, ok := data["kind"].(string); ok {
		e.Kind = k
		delete(data, "kind")
	}
	if r, ok := data["retryable"].(bool); ok {
		e.Retryable = r
		delete(data, "retryable")
	}
	if len(data) > 0 {
		e.Data = data
	}
	return nil
}
