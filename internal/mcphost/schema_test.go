package mcphost

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/mcpclient"
)

func TestSchemaOfGivesProvidersAnObjectSchema(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Already fine: passed through as the server wrote it.
		{`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`, `{"properties":{"x":{"type":"string"}},"required":["x"],"type":"object"}`},
		{`{"properties":{"x":{"type":"string"}}}`, `{"properties":{"x":{"type":"string"}},"type":"object"}`},
		{`{"type":"object"}`, `{"properties":{},"type":"object"}`},
		{`{}`, `{"properties":{},"type":"object"}`},
		{`{"type":"string","description":"d"}`, `{"description":"d","properties":{},"type":"object"}`},
		{`{"type":["string","null"]}`, `{"properties":{},"type":"object"}`},
		{`{"type":["object","null"],"properties":{"x":{}},"required":"x"}`, `{"properties":{"x":{}},"type":"object"}`},
		{`{"type":"object","properties":null,"required":["a",1]}`, `{"properties":{},"required":["a"],"type":"object"}`},
		{`{"type":7}`, `{"properties":{},"type":"object"}`},
		{`{"oneOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"a":{"type":"integer"},"b":{}}}]}`,
			`{"properties":{"a":{"type":"string"},"b":{}},"type":"object"}`},
		{`{"type":"object","properties":{"a":{}},"required":["a"],"allOf":[{"properties":{"b":{}},"required":["b"]}],"not":{}}`,
			`{"properties":{"a":{},"b":{}},"required":["a","b"],"type":"object"}`},
	} {
		got := schemaOf(&mcpclient.Tool{Name: "t", InputSchema: json.RawMessage(tc.in)})
		var norm any
		if err := json.Unmarshal(got, &norm); err != nil {
			t.Fatalf("%s: %s: %v", tc.in, got, err)
		}
		b, _ := json.Marshal(norm)
		if string(b) != tc.want {
			t.Errorf("schemaOf(%s) = %s, want %s", tc.in, b, tc.want)
		}
	}
	if got := string(schemaOf(&mcpclient.Tool{Name: "t"})); got != `{"type":"object","properties":{}}` {
		t.Errorf("no schema: %s", got)
	}
}
