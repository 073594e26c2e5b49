package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID, and Result or Error).
type Message struct {
	ID     json.RawMessage // nil for a notification
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// wireMessage is a Message as it is written.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object, the error of a call the server
// failed.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// The JSON-RPC error codes the client uses.
const (
	CodeMethodNotFound = -32601
	CodeInternalError  = -32603
)

func (e *Error) Error() string {
	if len(e.Data) > 0 && !bytes.Equal(e.Data, []byte("null")) {
		return fmt.Sprintf("%s (code %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// Encode returns m as one line of JSON, without the line's end.
func Encode(m *Message) ([]byte, error) {
	return json.Marshal(wireMessage{JSONRPC: "2.0", ID: m.ID, Method: m.Method, Params: m.Params, Result: m.Result, Error: m.Error})
}

// Decode reads one JSON-RPC 2.0 message (not a batch). It fails on
// anything else: JSON that is not an object, a wrong or missing version,
// a message that is neither a request, a notification nor a response,
// or an id that is neither a string nor a number.
func Decode(data []byte) (*Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	if w.JSONRPC != "2.0" {
		return nil, fmt.Errorf("jsonrpc is %q, not \"2.0\"", w.JSONRPC)
	}
	m := &Message{ID: w.ID, Method: w.Method, Params: w.Params, Result: w.Result, Error: w.Error}
	if bytes.Equal(m.ID, []byte("null")) {
		m.ID = nil
	}
	if m.ID != nil && !ValidID(m.ID) {
		return nil, fmt.Errorf("the id %s is neither a string nor a number", m.ID)
	}
	if m.Method == "" {
		if m.Result == nil && m.Error == nil {
			return nil, errors.New("a message with neither a method nor a result or error")
		}
		if m.Result != nil && m.Error != nil {
			return nil, errors.New("a response with both a result and an error")
		}
	}
	return m, nil
}

// DecodeBatch reads a line holding one message or a batch (a JSON array
// of messages).
func DecodeBatch(line []byte) ([]*Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '[' {
		m, err := Decode(line)
		if err != nil {
			return nil, err
		}
		return []*Message{m}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("an empty batch")
	}
	msgs := make([]*Message, 0, len(raws))
	for _, r := range raws {
		m, err := Decode(r)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// ValidID reports whether raw is a JSON string or number, the ids
// JSON-RPC allows besides null.
func ValidID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case c == '-' || c >= '0' && c <= '9':
		var n json.Number
		return json.Unmarshal(raw, &n) == nil
	}
	return false
}

// idKey is the key of an id in the table of calls: the client's ids are
// integers; a server that echoes one as "7" or 7.0 still matches.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 1 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = []byte(s)
		}
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return string(raw)
}
