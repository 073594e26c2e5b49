package main

import (
	"testing"

	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/sdk/wire"
)

// TestPromptOverrides: a prompt's model and max_tokens go on its own
// requests only; the next prompt and get_state have the session's again.
// A reasoning level the model does not take, and limits out of range, are
// refused with invalid_params before anything runs.
func TestPromptOverrides(t *testing.T) {
	srv := providertest.NewBoundServer(t, "")
	p := start(t, nil, "rpc", "--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key",
		"--base-url", srv.URL, "--cwd", t.TempDir(), "--no-tools", "--strict-mcp-config")
	for _, bad := range []string{
		`{"id":"b1","type":"prompt","message":"hi","reasoning":"sideways"}`,
		`{"id":"b2","type":"prompt","message":"hi","max_steps":0}`,
		`{"id":"b3","type":"prompt","message":"hi","max_tokens":-4}`,
		`{"id":"b4","type":"prompt","message":"hi","max_cost_usd":0}`,
	} {
		p.send(bad)
		r, _ := p.response()
		wantResponse(t, r, "prompt", false, wire.CodeInvalidParams)
	}
	p.send(`{"id":"1","type":"prompt","message":"first","model":"claude-haiku-5-5","max_tokens":321}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	if d := doneOf(t, p.untilDone()); d.Result == nil || d.Result.Stop != wire.StopEndTurn {
		t.Fatalf("first prompt: %+v", d.Result)
	}
	p.send(`{"id":"s","type":"get_state"}`)
	r, _ = p.response()
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	if st := res.(*wire.StateResult); st.Model != "claude-sonnet-5-5" {
		t.Fatalf("get_state model %q after an overridden prompt, want the session's claude-sonnet-5-5", st.Model)
	}
	p.send(`{"id":"2","type":"prompt","message":"second"}`)
	r, _ = p.response()
	wantResponse(t, r, "prompt", true, "")
	p.untilDone()
	_, _, _, bodies := srv.Stats()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	if bodies[0]["model"] != "claude-haiku-5-5" || bodies[0]["max_tokens"] != float64(321) {
		t.Errorf("first request: model %v, max_tokens %v; want claude-haiku-5-5, 321", bodies[0]["model"], bodies[0]["max_tokens"])
	}
	if bodies[1]["model"] != "claude-sonnet-5-5" || bodies[1]["max_tokens"] == float64(321) {
		t.Errorf("second request: model %v, max_tokens %v; want the session's", bodies[1]["model"], bodies[1]["max_tokens"])
	}
}

// loopScript is a script whose every model call asks for ls and reports
// 1000 input tokens: $0.001 at the scripted model's made-up prices.
func loopScript(t *testing.T) string {
	return script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "again", "tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{"path": "."}}}, "usage": map[string]any{"input": 1000}},
	}}}})
}

// TestPromptMaxSteps: a prompt's max_steps ends it with max_steps after
// that many model calls, whatever the session's --max-steps.
func TestPromptMaxSteps(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", loopScript(t), "--permission", "allow", "--max-steps", "9")...)
	p.send(`{"id":"1","type":"prompt","message":"loop","max_steps":2}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	var code wire.ErrorCode
	for _, ev := range evs {
		if e, ok := ev.(*wire.ErrorEvent); ok {
			code = e.Code
		}
	}
	if d := doneOf(t, evs); code != wire.CodeMaxSteps || d.Result.Turns != 2 {
		t.Fatalf("error %q after %d turns; want max_steps after 2", code, d.Result.Turns)
	}
}

// TestMaxCost: --max-cost ends a prompt after the model call that spends
// it, with stop max_cost and its tool calls not run; a prompt's own
// max_cost_usd replaces it; the next prompt has a budget of its own.
func TestMaxCost(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", loopScript(t), "--permission", "allow", "--max-cost", "0.0025")...)
	for _, c := range []struct {
		line  string
		turns int64
	}{
		{`{"id":"1","type":"prompt","message":"loop"}`, 3},
		{`{"id":"2","type":"prompt","message":"loop","max_cost_usd":0.0015}`, 2},
		{`{"id":"3","type":"prompt","message":"loop"}`, 3},
	} {
		p.send(c.line)
		r, _ := p.response()
		wantResponse(t, r, "prompt", true, "")
		evs := p.untilDone()
		var last *wire.TurnEndEvent
		results := 0
		for _, ev := range evs {
			switch e := ev.(type) {
			case *wire.TurnEndEvent:
				last = e
			case *wire.ToolResultEvent:
				results++
			case *wire.ErrorEvent:
				t.Fatalf("%s: error %s", c.line, e.Message)
			}
		}
		d := doneOf(t, evs)
		if last == nil || last.Stop != wire.StopMaxCost || last.Reason == "" || d.Result.Stop != wire.StopMaxCost || d.Result.Turns != c.turns {
			t.Fatalf("%s: last turn_end %+v, result %+v; want stop max_cost with a reason after %d turns", c.line, last, d.Result, c.turns)
		}
		if results != int(c.turns) {
			t.Errorf("%s: %d tool results, want %d (the last call answered as not run)", c.line, results, c.turns)
		}
	}
}
