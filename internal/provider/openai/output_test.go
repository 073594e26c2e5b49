package openai

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
)

// TestOutputSchemaField: a request with an output schema asks for it in
// Chat Completions' response_format (ResponseFormatJSONSchema of the openai package); one without has no such field.
func TestOutputSchemaField(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["city"]}`)
	for _, withSchema := range []bool{true, false} {
		req := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "capital of France?"}}}}}
		if withSchema {
			req.OutputSchema = schema
		}
		body, err := buildRequest(req, "openai")
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(body, &all); err != nil {
			t.Fatal(err)
		}
		got := string(all["response_format"])
		if withSchema && got != `{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object","required":["city"]},"strict":false}}` {
			t.Fatalf("request's %s: %s\nwant %s", `["response_format"]`, got, `{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object","required":["city"]},"strict":false}}`)
		}
		if !withSchema && got != "" {
			t.Fatalf("a request without a schema has %s", got)
		}
	}
}
