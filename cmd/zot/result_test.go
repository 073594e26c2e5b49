package main

import (
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// doneOf returns the done at the end of evs.
func doneOf(t *testing.T, evs []wire.Event) *wire.DoneEvent {
	t.Helper()
	d, ok := evs[len(evs)-1].(*wire.DoneEvent)
	if !ok {
		t.Fatalf("last event is %s, want done", evs[len(evs)-1].Type())
	}
	return d
}

// TestPromptResultRecord: every prompt's done carries the record of that
// prompt alone (stop, final text, model calls, tool calls, duration,
// usage and cost summed over its calls); a compaction's done carries none.
func TestPromptResultRecord(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"text": "Let me look.", "tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{"path": "."}}}, "usage": map[string]any{"input": 900, "output": 30, "cache_write": 800}},
			map[string]any{"text": "Three files.", "usage": map[string]any{"input": 100, "output": 5, "cache_read": 800}},
		}},
		map[string]any{"steps": []any{map[string]any{"text": "Second.", "usage": map[string]any{"input": 7, "output": 2}}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s, "--permission", "allow")...)
	for i, want := range []wire.PromptResult{
		{Stop: wire.StopEndTurn, Text: "Three files.", Turns: 2, ToolCalls: 1, Usage: wire.Usage{Input: 1000, Output: 35, CacheRead: 800, CacheWrite: 800}},
		{Stop: wire.StopEndTurn, Text: "Second.", Turns: 1, Usage: wire.Usage{Input: 7, Output: 2}},
	} {
		p.send(`{"id":"p","type":"prompt","message":"list"}`)
		r, _ := p.response()
		wantResponse(t, r, "prompt", true, "")
		got := doneOf(t, p.untilDone()).Result
		if got == nil {
			t.Fatalf("prompt %d: done has no result", i+1)
		}
		if got.DurationMs < 0 {
			t.Fatalf("prompt %d: duration %d", i+1, got.DurationMs)
		}
		got.DurationMs, got.Usage.CostUSD, got.Usage.CostUnknown = 0, 0, nil
		if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
			t.Fatalf("prompt %d result:\n got %s\nwant %s", i+1, g, w)
		}
	}
	p.send(`{"id":"c","type":"compact"}`)
	p.response()
	if d := doneOf(t, p.untilDone()); d.Result != nil {
		t.Fatalf("a compaction's done has a result: %s", mustJSON(t, d.Result))
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestStructuredOutput: a prompt with an output_schema ends with the
// answer parsed on its result; an answer that does not follow the schema
// gets a corrective turn that says what is wrong; once the corrective
// turns are spent the prompt fails with invalid_output naming the schema
// path; a schema that is not one is refused up front.
func TestStructuredOutput(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": `{"city": 3}`}}},
		map[string]any{"steps": []any{map[string]any{"text": "```json\n{\"city\": \"Paris\"}\n```"}}},
		map[string]any{"steps": []any{map[string]any{"text": `{"town": "Lyon"}`}}},
	}})
	p := start(t, nil, rpcArgs(t, "--script", s)...)
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`

	p.send(`{"id":"1","type":"prompt","message":"capital of France?","output_schema":` + schema + `}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	res := doneOf(t, evs).Result
	if res == nil || string(res.Structured) != `{"city":"Paris"}` || res.Turns != 2 || res.Stop != wire.StopEndTurn {
		t.Fatalf("result %s; want structured {\"city\":\"Paris\"} after 2 turns", mustJSON(t, res))
	}
	var corrective string
	for _, ev := range evs {
		if um, ok := ev.(*wire.UserMessageEvent); ok {
			corrective = mustJSON(t, um.Content)
		}
	}
	if !strings.Contains(corrective, "/properties/city") {
		t.Fatalf("the corrective message does not name the failing path: %s", corrective)
	}

	p.send(`{"id":"2","type":"prompt","message":"capital of France?","output_retries":0,"output_schema":` + schema + `}`)
	p.response()
	evs = p.untilDone()
	var failed *wire.ErrorEvent
	for _, ev := range evs {
		if e, ok := ev.(*wire.ErrorEvent); ok {
			failed = e
		}
	}
	if failed == nil || failed.Code != wire.CodeInvalidOutput || !strings.Contains(failed.Message, "required") {
		t.Fatalf("want an invalid_output error naming what is missing; events %v, error %s", types(evs), mustJSON(t, failed))
	}
	if res := doneOf(t, evs).Result; res == nil || res.Stop != wire.StopError || res.Structured != nil || res.Text != `{"town": "Lyon"}` {
		t.Fatalf("result of the failed prompt: %s", mustJSON(t, res))
	}

	for _, bad := range []string{`"output_schema":{"type":12}`, `"output_schema":"x"`, `"output_schema":{},"output_retries":11`} {
		p.send(`{"id":"3","type":"prompt","message":"x",` + bad + `}`)
		r, _ = p.response()
		wantResponse(t, r, "prompt", false, wire.CodeInvalidParams)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
