package anthropic

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
)

// TestOutputSchemaField: a request with an output schema asks for it in
// the Messages API's output_config.format (OutputConfig.format, a JSONOutputFormat, of @anthropic-ai/sdk; OutputConfigParam.Format of anthropic-sdk-go); one without has no such field.
func TestOutputSchemaField(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["city"]}`)
	for _, withSchema := range []bool{true, false} {
		req := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "capital of France?"}}}}}
		if withSchema {
			req.OutputSchema = schema
		}
		body, err := buildRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(body, &all); err != nil {
			t.Fatal(err)
		}
		got := ""
		if raw, ok := all["output_config"]; ok {
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(raw, &inner); err != nil {
				t.Fatal(err)
			}
			got = string(inner["format"])
		}
		if withSchema && got != `{"type":"json_schema","schema":{"type":"object","required":["city"]}}` {
			t.Fatalf("request's %s: %s\nwant %s", `["output_config"]["format"]`, got, `{"type":"json_schema","schema":{"type":"object","required":["city"]}}`)
		}
		if !withSchema && got != "" {
			t.Fatalf("a request without a schema has %s", got)
		}
	}
}
