package wire

import (
	"encoding/json"
	"reflect"
	"strconv"

	"zot.dev/zot/internal/wirecodec"
)

// idType is the reflect.Type of ID, for the errors of its decoding.
var idType = reflect.TypeFor[ID]()

// ID is a command's correlation id: a JSON string or number chosen by the
// client. It keeps the id's exact JSON text, so the response echoes it with
// the same JSON type and spelling. The zero ID means "no id"; a JSON null
// decodes to the zero ID. IDs are comparable.
type ID struct {
	raw string
}

// StringID returns the ID that is the JSON string s.
func StringID(s string) ID { return ID{raw: string(wirecodec.AppendString(nil, s))} }

// NumberID returns the ID that is the JSON number n.
func NumberID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return id.raw != "" && id.raw[0] == '"' }

// String returns the ID's JSON text, e.g. `"1"` or `42`, or "" for none.
func (id ID) String() string { return id.raw }

// AppendJSON appends the ID's JSON text, or null for the zero ID.
func (id ID) AppendJSON(b []byte) []byte {
	if id.raw == "" {
		return append(b, "null"...)
	}
	return append(b, id.raw...)
}

// MarshalJSON encodes the ID as it was received.
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// UnmarshalJSON accepts a JSON string, a JSON number or null.
func (id *ID) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		*id = ID{}
		return nil
	case len(data) > 1 && data[0] == '"' && data[len(data)-1] == '"':
		// encoding/json has already checked the syntax; keeping the text
		// as sent echoes the id byte for byte.
		if !json.Valid(data) {
			return &json.UnmarshalTypeError{Value: "id", Type: idType}
		}
		*id = ID{raw: string(data)}
		return nil
	case len(data) > 0 && (data[0] == '-' || data[0] >= '0' && data[0] <= '9'):
		if !json.Valid(data) {
			return &json.UnmarshalTypeError{Value: "id", Type: idType}
		}
		*id = ID{raw: string(data)}
		return nil
	}
	return &json.UnmarshalTypeError{Value: wirecodec.JSONKind(data), Type: idType}
}
