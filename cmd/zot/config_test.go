package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// configOf returns the defaults of a config command's answer.
func configOf(t *testing.T, r *wire.Response) wire.SessionDefaults {
	t.Helper()
	if !r.Success {
		t.Fatalf("%s failed: %s %s", r.Command, r.Code, r.Error)
	}
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*wire.ConfigResult).Config
}

// TestSessionDefaults: get_config shows the defaults the flags set;
// patch_config merges (RFC 7396: null takes a default back to zot's) and
// set_config replaces them, and the next prompts use them; a refused
// value sets nothing.
func TestSessionDefaults(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", loopScript(t), "--permission", "allow", "--max-steps", "9", "--max-cost", "0.0025")...)
	ask := func(line string) *wire.Response {
		t.Helper()
		p.send(line)
		r, _ := p.response()
		return r
	}
	c := configOf(t, ask(`{"id":"g","type":"get_config"}`))
	if c.Model != "scripted" || c.MaxSteps != 9 || c.MaxCostUSD == nil || *c.MaxCostUSD != 0.0025 {
		t.Fatalf("get_config: %+v", c)
	}
	c = configOf(t, ask(`{"id":"p","type":"patch_config","patch":{"max_cost_usd":0.0015,"max_steps":null}}`))
	if c.Model != "scripted" || c.MaxSteps != 50 || c.MaxCostUSD == nil || *c.MaxCostUSD != 0.0015 {
		t.Fatalf("after patch_config: %+v", c)
	}
	wantResponse(t, ask(`{"id":"1","type":"prompt","message":"loop"}`), "prompt", true, "")
	if d := doneOf(t, p.untilDone()); d.Result.Stop != wire.StopMaxCost || d.Result.Turns != 2 {
		t.Fatalf("prompt under the patched budget: %+v", d.Result)
	}
	c = configOf(t, ask(`{"id":"s","type":"set_config","config":{"model":"scripted","max_steps":2}}`))
	if c.MaxSteps != 2 || c.MaxCostUSD != nil {
		t.Fatalf("after set_config: %+v", c)
	}
	wantResponse(t, ask(`{"id":"2","type":"prompt","message":"loop"}`), "prompt", true, "")
	evs := p.untilDone()
	var code wire.ErrorCode
	for _, ev := range evs {
		if e, ok := ev.(*wire.ErrorEvent); ok {
			code = e.Code
		}
	}
	if d := doneOf(t, evs); code != wire.CodeMaxSteps || d.Result.Turns != 2 {
		t.Fatalf("prompt under set max_steps 2: error %q after %d turns", code, d.Result.Turns)
	}
	wantResponse(t, ask(`{"id":"b1","type":"patch_config","patch":{"model":null}}`), "patch_config", false, wire.CodeUnknownModel)
	wantResponse(t, ask(`{"id":"b2","type":"patch_config","patch":{"reasoning":"sideways","max_steps":7}}`), "patch_config", false, wire.CodeInvalidParams)
	wantResponse(t, ask(`{"id":"b3","type":"set_config","config":{"model":"scripted","max_steps":0}}`), "set_config", false, wire.CodeInvalidParams)
	wantResponse(t, ask(`{"id":"b4","type":"patch_config","patch":{"max_cost_usd":-1}}`), "patch_config", false, wire.CodeInvalidParams)
	wantResponse(t, ask(`{"id":"b5","type":"patch_config","patch":{"max_steps":0}}`), "patch_config", false, wire.CodeInvalidParams)
	if c = configOf(t, ask(`{"id":"g2","type":"get_config"}`)); c.MaxSteps != 2 || c.Model != "scripted" || c.MaxCostUSD != nil {
		t.Fatalf("a refused change set something: %+v", c)
	}
}

// TestCapabilities: get_capabilities names this session's provider among
// those zot speaks, the doors, the features and the limits.
func TestCapabilities(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--max-line-bytes", "4096")...)
	p.send(`{"id":"c","type":"get_capabilities"}`)
	r, _ := p.response()
	wantResponse(t, r, "get_capabilities", true, "")
	res, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	c := res.(*wire.CapabilitiesResult)
	if c.Provider != "scripted" || !slices.Contains(c.Providers, "anthropic") || !slices.Contains(c.Providers, "scripted") {
		t.Errorf("providers: %q of %q", c.Provider, c.Providers)
	}
	if !slices.Contains(c.Doors, "rpc") || !slices.Contains(c.Doors, "acp") {
		t.Errorf("doors: %q", c.Doors)
	}
	for _, f := range []string{"prompt_overrides", "cost_budget", "session_config", "output_schema"} {
		if !slices.Contains(c.Features, f) {
			t.Errorf("features %q lack %s", c.Features, f)
		}
	}
	if c.Limits.MaxLineBytes != 4096 || c.Limits.MaxSteps != 10000 || c.Limits.MaxOutputRetries != 10 {
		t.Errorf("limits: %+v", c.Limits)
	}
}

// TestSessionConfigOverACP: _zot/session/config reads a session's
// defaults, replaces them (set) and merges a patch (RFC 7396), and a
// prompt ends under the budget set so; a refused value sets nothing.
func TestSessionConfigOverACP(t *testing.T) {
	a := startACPProc(t, doorDir(t), "--provider", "scripted", "--script", loopScript(t), "--permission", "allow", "--max-steps", "9")
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()), "")))
	type defaults struct {
		Model      string   `json:"model"`
		MaxSteps   int64    `json:"maxSteps"`
		MaxCostUsd *float64 `json:"maxCostUsd"`
	}
	cfg := func(n int, extra string) defaults {
		t.Helper()
		f, _ := p.call(fmt.Sprint(n), "_zot/session/config", fmt.Sprintf(`{"sessionId":%q%s}`, id, extra), "")
		var res struct{ Config defaults }
		if f.Error != nil || json.Unmarshal(f.Result, &res) != nil {
			t.Fatalf("_zot/session/config%s: %s", extra, f.raw)
		}
		return res.Config
	}
	if c := cfg(3, ""); c.Model != "scripted" || c.MaxSteps != 9 || c.MaxCostUsd != nil {
		t.Fatalf("read: %+v", c)
	}
	if c := cfg(4, `,"patch":{"maxCostUsd":0.0015,"maxSteps":null}`); c.MaxSteps != 50 || c.MaxCostUsd == nil || *c.MaxCostUsd != 0.0015 {
		t.Fatalf("patch: %+v", c)
	}
	f, _ := p.call("5", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"loop"}]}`, id), "")
	if f.Error != nil || !strings.Contains(string(f.Result), `"max_turn_requests"`) {
		t.Fatalf("a prompt past the budget: %s", f.raw)
	}
	if c := cfg(6, `,"set":{"model":"scripted","maxSteps":4}`); c.MaxSteps != 4 || c.MaxCostUsd != nil {
		t.Fatalf("set: %+v", c)
	}
	// A prompt's own budget, in its _meta.zot, ends it too; the defaults stay.
	f, _ = p.call("61", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"loop"}],"_meta":{"zot":{"maxCostUsd":0.0015}}}`, id), "")
	if f.Error != nil || !strings.Contains(string(f.Result), `"max_turn_requests"`) {
		t.Fatalf("a prompt past its own budget: %s", f.raw)
	}
	f, _ = p.call("62", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"loop"}],"_meta":{"zot":{"maxSteps":0}}}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 {
		t.Fatalf("a prompt with maxSteps 0: %s", f.raw)
	}
	// A reasoning level outside the schema's enum is refused as zot rpc
	// refuses it, naming the field.
	for n, bad := range []struct{ method, params, field string }{
		{"_zot/session/config", fmt.Sprintf(`{"sessionId":%q,"patch":{"reasoning":"sideways"}}`, id), "patch.reasoning"},
		{"_zot/session/config", fmt.Sprintf(`{"sessionId":%q,"set":{"model":"m","maxSteps":2,"reasoning":"sideways"}}`, id), "set.reasoning"},
		{"session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"loop"}],"_meta":{"zot":{"reasoning":"sideways"}}}`, id), "_meta.zot.reasoning"},
	} {
		f, _ = p.call(fmt.Sprint(70+n), bad.method, bad.params, "")
		if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["field"] != bad.field {
			t.Errorf("%s %s: %s, want -32602 naming %s", bad.method, bad.params, f.raw, bad.field)
		}
	}
	if c := cfg(8, ""); c.MaxSteps != 4 {
		t.Errorf("a refused patch set something: %+v", c)
	}
}
