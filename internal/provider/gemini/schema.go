package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// schemaKey reports whether s is one of the JSON Schema keywords Gemini's function parameter
// schema (a subset of OpenAPI 3.0) accepts; it rejects a request that uses
// any other, so the rest are dropped.
func schemaKey(s string) bool {
	switch s {
	case "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
		"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
		"pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum":
		return true
	}
	return false
}

// schemaFormat reports whether s is one of the formats Gemini accepts.
func schemaFormat(s string) bool {
	switch s {
	case "enum", "date-time", "float", "double", "int32", "int64":
		return true
	}
	return false
}

// parameters converts a tool's JSON Schema into Gemini's schema. A tool
// without parameters gets none: Gemini rejects an object schema whose
// properties are empty.
func parameters(schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber() // keep numbers exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding schema: %w", err)
	}
	m, ok := cleanSchema(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	if props, _ := m["properties"].(map[string]any); len(props) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding schema: %w", err)
	}
	return b, nil
}

// cleanSchema returns a copy of the schema v that Gemini accepts: unknown
// keywords dropped ($schema, $id, additionalProperties, examples, ...), a
// type list turned into one type and nullable, oneOf into anyOf, const
// into a one-value enum, non-string enums and unknown formats dropped, and
// required restricted to the properties that exist.
func cleanSchema(v any) any {
	in, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(in))
	for k, val := range in {
		switch k {
		case "properties":
			if props, ok := val.(map[string]any); ok {
				clean := make(map[string]any, len(props))
				for name, sub := range props {
					clean[name] = cleanSchema(sub)
				}
				out[k] = clean
			}
		case "items":
			if _, ok := val.(map[string]any); ok {
				out[k] = cleanSchema(val)
			}
		case "anyOf":
			if list := cleanList(val); list != nil {
				out[k] = list
			}
		case "type":
			setType(out, val)
		case "format":
			if s, ok := val.(string); ok && schemaFormat(s) {
				out[k] = s
			}
		case "enum":
			if list, ok := stringList(val); ok {
				out[k] = list
			}
		default:
			if schemaKey(k) {
				out[k] = val
			}
		}
	}
	if _, ok := out["anyOf"]; !ok {
		if list := cleanList(in["oneOf"]); list != nil {
			out["anyOf"] = list
		}
	}
	if _, ok := out["enum"]; !ok {
		if s, ok := in["const"].(string); ok {
			out["enum"] = []any{s}
		}
	}
	if _, ok := out["enum"]; ok && out["type"] == nil {
		out["type"] = "string"
	}
	if _, ok := out["example"]; !ok {
		if list, ok := in["examples"].([]any); ok && len(list) > 0 {
			out["example"] = list[0]
		}
	}
	if req, ok := out["required"].([]any); ok {
		props, _ := out["properties"].(map[string]any)
		var keep []any
		for _, r := range req {
			if name, ok := r.(string); ok && props[name] != nil {
				keep = append(keep, r)
			}
		}
		if len(keep) > 0 {
			out["required"] = keep
		} else {
			delete(out, "required")
		}
	}
	return out
}

// setType sets the type of out from a JSON Schema type: a string, or a
// list of which "null" makes the schema nullable and the first other
// entry is the type.
func setType(out map[string]any, val any) {
	switch t := val.(type) {
	case string:
		out["type"] = t
	case []any:
		for _, e := range t {
			s, _ := e.(string)
			switch {
			case s == "null":
				out["nullable"] = true
			case s != "" && out["type"] == nil:
				out["type"] = s
			}
		}
	}
}

// cleanList cleans a list of schemas, or returns nil when v is not one.
func cleanList(v any) []any {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil
	}
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = cleanSchema(s)
	}
	return out
}

// stringList reports whether v is a list of strings, as Gemini's enum must
// be.
func stringList(v any) ([]any, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	for _, e := range list {
		if _, ok := e.(string); !ok {
			return nil, false
		}
	}
	return list, true
}
