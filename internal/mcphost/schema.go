package mcphost

import (
	"encoding/json"

	"zot.dev/zot/internal/mcpclient"
)

// emptyObjectSchema is the schema of a tool that takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// schemaOf returns a tool's input schema as JSON, in the shape every
// provider accepts at the top of a tool's parameters: an object schema
// with an object of properties, no oneOf, anyOf, allOf, enum or not at
// the top, and a required list of names. A server's schema is passed
// through as it is when it already has that shape; anything else is
// reshaped (see topLevelObject), since one tool whose schema a provider
// rejects fails every request of the session. Below the top the providers
// convert what their API needs, as for the built-in tools.
func schemaOf(t *mcpclient.Tool) json.RawMessage {
	if len(t.InputSchema) == 0 {
		return emptyObjectSchema
	}
	// Compacted, as a schema decoded and encoded again would be.
	data, err := json.Marshal(t.InputSchema)
	if err != nil {
		return emptyObjectSchema
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil || m == nil {
		return emptyObjectSchema
	}
	if !topLevelObject(m) {
		return data
	}
	out, err := json.Marshal(m)
	if err != nil {
		return emptyObjectSchema
	}
	return out
}

// topLevelObject reshapes the schema m into an object schema and reports
// whether it changed anything:
//   - a missing type becomes "object"; a type list holding "object" becomes
//     "object"; any other type (a server's {"type":"string"}) cannot
//     describe the arguments object of a call, so the schema becomes one
//     without properties, keeping its description;
//   - properties that are missing or not an object become {};
//   - the properties of the branches of a top-level oneOf, anyOf or allOf
//     join the top-level ones (the first to name one wins), allOf's
//     required names too, and the keywords go, with enum and not;
//   - required keeps only its names (strings).
func topLevelObject(m map[string]any) bool {
	changed := false
	switch typ := m["type"].(type) {
	case nil:
		m["type"] = "object"
		changed = true
	case string:
		if typ != "object" {
			return noArguments(m)
		}
	case []any:
		for _, e := range typ {
			changed = changed || e == "object"
		}
		if !changed {
			return noArguments(m)
		}
		m["type"] = "object"
	default:
		return noArguments(m)
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		props = map[string]any{}
		m["properties"] = props
		changed = true
	}
	var required []any
	if list, ok := m["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
		if len(required) != len(list) {
			changed = true
		}
	} else if _, present := m["required"]; present {
		changed = true
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		branches, present := m[key]
		if !present {
			continue
		}
		delete(m, key)
		changed = true
		list, _ := branches.([]any)
		for _, b := range list {
			bm, _ := b.(map[string]any)
			bp, _ := bm["properties"].(map[string]any)
			for name, p := range bp {
				if _, taken := props[name]; !taken {
					props[name] = p
				}
			}
			if key != "allOf" {
				continue
			}
			if req, ok := bm["required"].([]any); ok {
				for _, r := range req {
					if s, ok := r.(string); ok {
						required = append(required, s)
					}
				}
			}
		}
	}
	for _, key := range []string{"enum", "not", "const"} {
		if _, present := m[key]; present {
			delete(m, key)
			changed = true
		}
	}
	if changed {
		if len(required) > 0 {
			m["required"] = required
		} else {
			delete(m, "required")
		}
	}
	return changed
}

// noArguments makes m a schema without properties, keeping its
// description. It reports true (m changed).
func noArguments(m map[string]any) bool {
	desc, hasDesc := m["description"].(string)
	clear(m)
	m["type"] = "object"
	m["properties"] = map[string]any{}
	if hasDesc {
		m["description"] = desc
	}
	return true
}
