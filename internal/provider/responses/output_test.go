package responses

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
)

// TestOutputSchemaField: a request with an output schema asks for it in
// the Responses API's text.format (ResponseFormatTextJSONSchemaConfig of the openai package); one without has no such field.
func TestOutputSchemaField(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["city"]}`)
	for _, withSchema := range []bool{true, false} {
		req := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "capital of France?"}}}}}
		if withSchema {
			req.OutputSchema = schema
		}
		body, err := buildRequest(req, "openai-responses")
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(body, &all); err != nil {
			t.Fatal(err)
		}
		got := string(all["text"])
		if withSchema && got != `{"format":{"type":"json_schema","name":"answer","schema":{"type":"object","required":["city"]},"strict":false}}` {
			t.Fatalf("request's %s: %s\nwant %s", `["text"]`, got, `{"format":{"type":"json_schema","name":"answer","schema":{"type":"object","required":["city"]},"strict":false}}`)
		}
		if !withSchema && got != "" {
			t.Fatalf("a request without a schema has %s", got)
		}
	}
}
