package sdk

import (
	"context"
	"encoding/json"
	"testing"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// TestRunStructured: the in-process Runtime takes an output schema with
// PromptWith, and client.Run returns the record with the parsed answer,
// or the invalid_output error with the record of the failed prompt.
func TestRunStructured(t *testing.T) {
	rt := newScripted(t, `{"turns":[{"steps":[{"text":"{\"n\": 3}","usage":{"input":5,"output":4}}]},{"steps":[{"text":"three"}]}]}`, Config{})
	ctx := context.Background()
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	res, err := client.Run(ctx, rt, "n?", client.PromptOptions{OutputSchema: schema})
	if err != nil || res == nil || string(res.Structured) != `{"n":3}` || res.Turns != 1 || res.Usage.Input != 5 || res.Usage.Output != 4 {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	zero := 0
	res, err = client.Run(ctx, rt, "n?", client.PromptOptions{OutputSchema: schema, OutputRetries: &zero})
	if wire.CodeOf(err) != wire.CodeInvalidOutput || res == nil || res.Stop != wire.StopError || res.Text != "three" {
		t.Fatalf("Run with an answer that is not JSON: %+v, %v", res, err)
	}
	if _, err := rt.PromptWith(ctx, "x", client.PromptOptions{OutputSchema: json.RawMessage(`{"type":1}`)}); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Fatalf("a schema that is not one: %v", err)
	}
}
