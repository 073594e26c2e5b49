package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestACPPromptResult: the answer to session/prompt carries the prompt's
// record in _meta.zot.result (the shape of zot rpc's done.result), and
// a prompt whose _meta.zot.outputSchema asks for JSON gets the parsed
// answer there as structured, after a corrective turn when the first
// answer did not follow the schema.
func TestACPPromptResult(t *testing.T) {
	home := doorDir(t)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "hello", "usage": map[string]any{"input": 10, "output": 2}}}},
		map[string]any{"steps": []any{map[string]any{"text": "Paris"}}},
		map[string]any{"steps": []any{map[string]any{"text": `{"city":"Paris"}`}}},
	}})
	p, _, _ := startACP(t, home, "--provider", "scripted", "--script", s, "--permission", "allow")
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home), "")
	id := sessionID(t, f)

	resultOf := func(raw json.RawMessage) *wire.PromptResult {
		t.Helper()
		var ans struct {
			StopReason string `json:"stopReason"`
			Meta       struct {
				Zot struct {
					Result *wire.PromptResult `json:"result"`
				} `json:"zot"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &ans); err != nil || ans.StopReason != "end_turn" || ans.Meta.Zot.Result == nil {
			t.Fatalf("answer %s (%v): want end_turn with _meta.zot.result", raw, err)
		}
		return ans.Meta.Zot.Result
	}
	f, _ = p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), "")
	if r := resultOf(f.Result); r.Text != "hello" || r.Turns != 1 || r.Usage.Input != 10 || r.Usage.Output != 2 || r.Stop != wire.StopEndTurn || r.Structured != nil {
		t.Fatalf("result %+v", r)
	}
	f, _ = p.call("4", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"capital of France?"}],"_meta":{"zot":{"outputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}}`, id), "")
	if r := resultOf(f.Result); string(r.Structured) != `{"city":"Paris"}` || r.Turns != 2 {
		t.Fatalf("structured result %+v (%s)", r, r.Structured)
	}
	f, _ = p.call("5", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"x"}],"_meta":{"zot":{"outputSchema":{"type":7}}}}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 {
		t.Fatalf("a schema that is not one: %s", f.raw)
	}
}
