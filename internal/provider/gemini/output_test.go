package gemini

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
)

// TestOutputSchemaField: a request with an output schema asks for it in
// generationConfig.responseMimeType and responseJsonSchema (GenerationConfig of @google/genai); one without has no such field.
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
		if raw, ok := all["generationConfig"]; ok {
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(raw, &inner); err != nil {
				t.Fatal(err)
			}
			if m, ok := inner["responseMimeType"]; ok {
				got = `{"responseMimeType":` + string(m) + `,"responseJsonSchema":` + string(inner["responseJsonSchema"]) + `}`
			}
		}
		if withSchema && got != `{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","required":["city"]}}` {
			t.Fatalf("request's %s: %s\nwant %s", `["generationConfig"]`, got, `{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","required":["city"]}}`)
		}
		if !withSchema && got != "" {
			t.Fatalf("a request without a schema has %s", got)
		}
	}
}
