package wirecodec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// UnknownTypeError is returned when a message's `type` names no variant of
// the union being decoded.
type UnknownTypeError struct {
	Union string // e.g. "Command"
	Type  string // the `type` value received
}

// Error returns the message of the UnknownTypeError.
func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("unknown %s type %q", unionWord(e.Union), e.Type)
}

// unionWord turns a union's Go name into words: "ContentBlock" → "content block".
func unionWord(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DecodeError is returned when a message cannot be decoded into its type.
// Its message is one line.
type DecodeError struct {
	Type  string // the message's `type`, when known
	Field string // the JSON path of the offending field, when known
	Msg   string
	Err   error // the underlying encoding/json error, if any
}

// Error returns the message of the DecodeError.
func (e *DecodeError) Error() string {
	var b strings.Builder
	if e.Type != "" {
		b.WriteString(e.Type)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the error underneath, for errors.Is and errors.As.
func (e *DecodeError) Unwrap() error { return e.Err }

// NewDecodeError turns an encoding/json error met decoding a message of
// type typ into a *DecodeError. kinds names the JSON types of the package's
// hand-written types (which encoding/json cannot tell), by Go type.
func NewDecodeError(typ string, err error, kinds map[reflect.Type]string) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &DecodeError{Type: typ, Field: te.Field, Msg: fmt.Sprintf("expected %s, got %s", goKind(te.Type, kinds), te.Value), Err: err}
	case errors.As(err, &se):
		return &DecodeError{Type: typ, Msg: fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, se.Error()), Err: err}
	}
	return &DecodeError{Type: typ, Msg: err.Error(), Err: err}
}

// goKind names a Go type in JSON words for error messages.
func goKind(t reflect.Type, kinds map[reflect.Type]string) string {
	if k, ok := kinds[t]; ok {
		return k
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

// DecodeList decodes a JSON array whose elements are decoded by decode;
// null decodes to a nil list.
func DecodeList[T any](data []byte, out *[]T, decode func([]byte) (T, error)) error {
	if string(data) == "null" {
		*out = nil
		return nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	list := make([]T, len(raws))
	for i, r := range raws {
		v, err := decode(r)
		if err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		list[i] = v
	}
	*out = list
	return nil
}
