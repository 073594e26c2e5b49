package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestStructuredOutputAgainstAimock: a prompt with an output_schema ends,
// through each HTTP provider, with the mock's JSON answer parsed on done's
// result. For Chat Completions the mock's fixture matches only a request
// whose response_format is json_schema (aimock's responseFormat match), so
// the answer proves the vendor's own field was sent; aimock normalises
// the other vendors' requests without their structured-output fields, so
// for them each provider's TestOutputSchemaField pins the field, and here
// the whole path (request, stream, check, result) runs against the mock.
func TestStructuredOutputAgainstAimock(t *testing.T) {
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			root := serveMock(t)
			msg, extra := "structured city, asked", []string(nil)
			if p.name == "openai" {
				// A model that takes function tools on Chat Completions
				// with its reasoning on, so the call goes there.
				msg, extra = "structured city, enforced", []string{"--model", "gpt-4.1"}
			}
			r := startRPC(t, root, workdir(t), p, extra...)
			fmt.Fprintf(r.in, `{"type":"prompt","id":"s","message":%q,"output_schema":%s}`+"\n", msg, schema)
			timeout := time.After(hangGuard)
			for {
				select {
				case l, ok := <-r.lines:
					if !ok {
						t.Fatal("zot rpc ended before done")
					}
					var e struct {
						Type    string `json:"type"`
						Success *bool  `json:"success"`
						Message string `json:"message"`
						Result  *struct {
							Stop       string          `json:"stop"`
							Turns      int             `json:"turns"`
							Structured json.RawMessage `json:"structured"`
						} `json:"result"`
					}
					if err := json.Unmarshal(l, &e); err != nil {
						t.Fatalf("not JSON: %q", l)
					}
					switch e.Type {
					case "response":
						if e.Success == nil || !*e.Success {
							t.Fatalf("prompt refused: %s", l)
						}
					case "error":
						t.Fatalf("error: %s", l)
					case "done":
						if e.Result == nil || string(e.Result.Structured) != `{"city":"Paris"}` || e.Result.Turns != 1 || e.Result.Stop != "end_turn" {
							t.Fatalf("done: %s", l)
						}
						return
					}
				case <-timeout:
					t.Fatal("no done")
				}
			}
		})
	}
}
