package gemini

import (
	"encoding/json"
	"testing"
)

func TestParameters(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"none", ``, ``},
		{"no properties", `{"type":"object","properties":{},"additionalProperties":false}`, ``},
		{"no properties key", `{"type":"object"}`, ``},
		{"unknown keywords dropped",
			`{"$schema":"x","$id":"y","type":"object","additionalProperties":false,"properties":{"a":{"type":"string","examples":["e1","e2"],"$comment":"c"}},"required":["a"]}`,
			`{"properties":{"a":{"example":"e1","type":"string"}},"required":["a"],"type":"object"}`},
		{"type list becomes nullable",
			`{"type":"object","properties":{"n":{"type":["null","integer"],"minimum":0,"maximum":9007199254740993}}}`,
			`{"properties":{"n":{"maximum":9007199254740993,"minimum":0,"nullable":true,"type":"integer"}},"type":"object"}`},
		{"oneOf becomes anyOf, nested cleaned",
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"string","format":"uri"},{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":{"type":"string"}}}]}}}`,
			`{"properties":{"v":{"anyOf":[{"type":"string"},{"items":{"properties":{"k":{"type":"string"}},"type":"object"},"type":"array"}]}},"type":"object"}`},
		{"const and enums",
			`{"type":"object","properties":{"mode":{"const":"fast"},"level":{"type":"integer","enum":[1,2,3]},"unit":{"enum":["c","f"]},"when":{"type":"string","format":"date-time"}}}`,
			`{"properties":{"level":{"type":"integer"},"mode":{"enum":["fast"],"type":"string"},"unit":{"enum":["c","f"],"type":"string"},"when":{"format":"date-time","type":"string"}},"type":"object"}`},
		{"required restricted to properties",
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a","ghost"]}`,
			`{"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`},
		{"required with no match removed",
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["ghost"]}`,
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{"tuple items dropped",
			`{"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}],"minItems":2}}}`,
			`{"properties":{"pair":{"minItems":2,"type":"array"}},"type":"object"}`},
	}
	for _, tt := range tests {
		got, err := parameters(json.RawMessage(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s: parameters =\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{`{"type":`, `[1]`, `"object"`} {
		if _, err := parameters(json.RawMessage(bad)); err == nil {
			t.Errorf("parameters(%s) accepted", bad)
		}
	}
}
