package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// argField describes one property of a tool's argument object for the
// strict decoder: its exact name, whether it is required, and how to store
// a value. set returns a short description of the expected type when the
// value has the wrong type.
type argField struct {
	name     string
	required bool
	want     string
	set      func(raw json.RawMessage) bool
}

// argError is a problem with the model's arguments; its message names the
// field so the model can correct the call.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

// invalidArgs returns the error Result for a decoding problem.
func invalidArgs(err error) Result {
	return Errorf("invalid arguments: " + err.Error())
}

// decodeArgs decodes raw, which must be a JSON object, into fields. Keys
// must match a field name exactly; unknown keys, values of the wrong type and
// missing required fields are errors naming the field (prefixed by where,
// as in "edits[2].old_text"). A null value counts as absent. It returns the
// set of fields that were present.
func decodeArgs(raw json.RawMessage, where string, fields ...argField) (map[string]bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		if where == "" {
			return nil, &argError{"expected a JSON object with the tool's arguments, got " + jsonKind(raw)}
		}
		return nil, &argError{fmt.Sprintf("%s must be an object, got %s", where, jsonKind(raw))}
	}
	byName := make(map[string]*argField, len(fields))
	for i := range fields {
		byName[fields[i].name] = &fields[i]
	}
	var unknown []string
	for k := range obj {
		if byName[k] == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.name
		}
		return nil, &argError{fmt.Sprintf("unknown field %s (allowed: %s)",
			quoteJoin(qualify(where, unknown)), strings.Join(names, ", "))}
	}
	present := make(map[string]bool, len(obj))
	for _, f := range fields {
		v, ok := obj[f.name]
		if ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			if !f.set(v) {
				return nil, &argError{fmt.Sprintf("field %q must be %s, got %s",
					qualify(where, []string{f.name})[0], f.want, jsonKind(v))}
			}
			present[f.name] = true
		}
	}
	for _, f := range fields {
		if f.required && !present[f.name] {
			return nil, &argError{fmt.Sprintf("missing required field %q", qualify(where, []string{f.name})[0])}
		}
	}
	return present, nil
}

func qualify(where string, names []string) []string {
	if where == "" {
		return names
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = where + "." + n
	}
	return out
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// jsonKind names the JSON type of raw for error messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "the number " + string(raw)
	}
	return "invalid JSON"
}

// stringArg stores a JSON string.
func stringArg(name string, required bool, dst *string) argField {
	return argField{name: name, required: required, want: "a string", set: func(raw json.RawMessage) bool {
		return raw[0] == '"' && json.Unmarshal(raw, dst) == nil
	}}
}

// boolArg stores a JSON boolean.
func boolArg(name string, required bool, dst *bool) argField {
	return argField{name: name, required: required, want: "a boolean", set: func(raw json.RawMessage) bool {
		return json.Unmarshal(raw, dst) == nil
	}}
}

// intArg stores a JSON number with an integral value (10 and 10.0 both
// count).
func intArg(name string, required bool, dst *int) argField {
	return argField{name: name, required: required, want: "an integer", set: func(raw json.RawMessage) bool {
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return false
		}
		*dst = int(f)
		return true
	}}
}

// numberArg stores a JSON number.
func numberArg(name string, required bool, dst *float64) argField {
	return argField{name: name, required: required, want: "a number", set: func(raw json.RawMessage) bool {
		return json.Unmarshal(raw, dst) == nil
	}}
}

// arrayArg stores a JSON array's elements undecoded.
func arrayArg(name string, required bool, dst *[]json.RawMessage) argField {
	return argField{name: name, required: required, want: "an array", set: func(raw json.RawMessage) bool {
		return raw[0] == '[' && json.Unmarshal(raw, dst) == nil
	}}
}
