// Package strictjson reads hand-written JSON files strictly: every value has
// the type asked for, objects have no unknown or repeated keys, and every
// error names the file and the position of the bad value, as in
//
//	models.json: models[2].context_window: want an integer, got a string
//
// zot uses it for files people write by hand (the model catalog, scripts
// of the scripted provider), where a silent default is worse than an error.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Value is one JSON value at a known position of a file.
type Value struct {
	file string
	path string
	raw  json.RawMessage
}

// Parse checks that data is one well-formed JSON value and returns it as the
// root of file. A syntax error names the line and column.
func Parse(data []byte, file string) (Value, error) {
	var probe json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return Value{}, fmt.Errorf("%s:%d:%d: invalid JSON: %v", file, line, col, se)
		}
		return Value{}, fmt.Errorf("%s: invalid JSON: %w", file, err)
	}
	return Value{file: file, raw: bytes.TrimSpace(data)}, nil
}

// position returns the 1-based line and column of the byte a syntax error
// stopped at: the decoder's offset counts that byte as read.
func position(data []byte, off int64) (line, col int) {
	i := int(min(off, int64(len(data)))) - 1
	if i < 0 {
		return 1, 1
	}
	before := data[:i]
	line = bytes.Count(before, []byte("\n")) + 1
	col = i - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Path is the position of v within its file ("" for the root).
func (v Value) Path() string { return v.path }

// Raw is v's JSON text.
func (v Value) Raw() json.RawMessage { return v.raw }

// Errorf returns an error that names v's file and position.
func (v Value) Errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if v.path == "" {
		return fmt.Errorf("%s: %s", v.file, msg)
	}
	return fmt.Errorf("%s: %s: %s", v.file, v.path, msg)
}

// Kind describes v's JSON type for messages: "an object", "an array",
// "a string", "a number", "a boolean" or "null".
func (v Value) Kind() string {
	if len(v.raw) == 0 {
		return "nothing"
	}
	switch v.raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// want returns the error for a value of the wrong type.
func (v Value) want(what string) error {
	return v.Errorf("want %s, got %s", what, v.Kind())
}

// String returns v as a string.
func (v Value) String() (string, error) {
	if v.Kind() != "a string" {
		return "", v.want("a string")
	}
	var s string
	if err := json.Unmarshal(v.raw, &s); err != nil {
		return "", v.Errorf("%v", err)
	}
	return s, nil
}

// Bool returns v as a boolean.
func (v Value) Bool() (bool, error) {
	if v.Kind() != "a boolean" {
		return false, v.want("true or false")
	}
	return v.raw[0] == 't', nil
}

// Float returns v as a finite number.
func (v Value) Float() (float64, error) {
	if v.Kind() != "a number" {
		return 0, v.want("a number")
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, v.Errorf("number %s is out of range", v.raw)
	}
	return f, nil
}

// Int returns v as an integer within [min, max].
func (v Value) Int(min, max int) (int, error) {
	if v.Kind() != "a number" {
		return 0, v.want("an integer")
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if err != nil || f != math.Trunc(f) {
		return 0, v.Errorf("want an integer, got %s", v.raw)
	}
	if f < float64(min) || f > float64(max) {
		return 0, v.Errorf("%s is out of range [%d, %d]", v.raw, min, max)
	}
	return int(f), nil
}

// Array returns the elements of v, each positioned as path[i].
func (v Value) Array() ([]Value, error) {
	if v.Kind() != "an array" {
		return nil, v.want("an array")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v.raw, &raws); err != nil {
		return nil, v.Errorf("%v", err)
	}
	out := make([]Value, len(raws))
	for i, r := range raws {
		out[i] = Value{file: v.file, path: fmt.Sprintf("%s[%d]", v.path, i), raw: r}
	}
	return out, nil
}

// Object returns v as an object. Repeated keys are an error.
func (v Value) Object() (*Object, error) {
	if v.Kind() != "an object" {
		return nil, v.want("an object")
	}
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, v.Errorf("%v", err)
	}
	o := &Object{self: v, index: map[string]int{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, v.Errorf("%v", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, v.Errorf("%v", err)
		}
		if _, dup := o.index[name]; dup {
			return nil, v.Errorf("field %q appears twice", name)
		}
		o.index[name] = len(o.fields)
		o.fields = append(o.fields, Value{file: v.file, path: join(v.path, name), raw: raw})
		o.names = append(o.names, name)
	}
	return o, nil
}

// join returns the path of field name within the object at path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Object is a JSON object whose fields keep their positions.
type Object struct {
	self   Value
	names  []string
	fields []Value
	index  map[string]int
}

// Errorf returns an error that names the object's file and position.
func (o *Object) Errorf(format string, args ...any) error { return o.self.Errorf(format, args...) }

// Path is the position of the object within its file ("" for the root).
func (o *Object) Path() string { return o.self.path }

// Allow returns an error naming the first field, in file order, that is not
// one of names.
func (o *Object) Allow(names ...string) error {
	allowed := make(map[string]bool, len(names))
	for _, n := range names {
		allowed[n] = true
	}
	for _, n := range o.names {
		if !allowed[n] {
			return o.Errorf("unknown field %q", n)
		}
	}
	return nil
}

// Get returns the field name, and false when the object has none.
func (o *Object) Get(name string) (Value, bool) {
	i, ok := o.index[name]
	if !ok {
		return Value{}, false
	}
	return o.fields[i], true
}

// Has reports whether the object has the field name.
func (o *Object) Has(name string) bool {
	_, ok := o.index[name]
	return ok
}

// Require returns the field name, or an error saying it is missing.
func (o *Object) Require(name string) (Value, error) {
	f, ok := o.Get(name)
	if !ok {
		return Value{}, o.Errorf("missing %q", name)
	}
	return f, nil
}
