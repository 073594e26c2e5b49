package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// SchemaOf derives the JSON Schema of v's type as encoding/json encodes
// and decodes it: a struct is an object whose properties are its exported
// fields under their json names (embedded structs' fields included, "-"
// skipped); a field is required unless its tag says omitempty or
// omitzero or it is a pointer. The tag `jsonschema:"..."` gives a
// field's description. Strings, booleans, integers and floats map to
// their JSON types, slices and arrays to arrays ([]byte to a base64
// string), maps with string keys to objects, pointers to what they point
// to, json.RawMessage and interfaces to any value. Channels, functions,
// complex numbers and recursive types have no schema: SchemaOf fails
// for them. The result is an object schema when v is a struct.
func SchemaOf(v any) (json.RawMessage, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, errors.New("schema of nil: want a struct type")
	}
	s, err := schemaOf(t, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// schemaOf is the schema of t; seen holds the struct types being
// derived, to refuse recursion.
func schemaOf(t reflect.Type, seen []reflect.Type) (map[string]any, error) {
	if t == rawMessageType {
		return map[string]any{}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), seen)
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
		}
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: a map's keys must be strings", t)
		}
		vals, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Struct:
		for _, s := range seen {
			if s == t {
				return nil, fmt.Errorf("%s refers to itself: a recursive type has no schema here", t)
			}
		}
		props := map[string]any{}
		required := []string{}
		if err := structFields(t, append(seen, t), props, &required); err != nil {
			return nil, err
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	}
	return nil, fmt.Errorf("%s has no JSON Schema", t)
}

// structFields adds t's fields to props (and their names to required
// when they are), embedded structs' fields in place.
func structFields(t reflect.Type, seen []reflect.Type, props map[string]any, required *[]string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := structFields(ft, seen, props, required); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s, err := schemaOf(f.Type, seen)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d := f.Tag.Get("jsonschema"); d != "" {
			s["description"] = d
		}
		props[name] = s
		optional := f.Type.Kind() == reflect.Pointer
		for _, o := range strings.Split(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				optional = true
			}
		}
		if !optional {
			*required = append(*required, name)
		}
	}
	return nil
}
