package client_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

// loopScript is a script whose every model call asks for ls and reports
// 1000 input tokens: $0.001 at the scripted model's made-up prices.
const loopScript = `{"turns":[{"steps":[{"text":"again","tool_calls":[{"name":"ls","args":{"path":"."}}],"usage":{"input":1000}}]}]}`

// both runs f against the in-process Runtime and a `zot rpc` subprocess
// made from the same settings.
func both(t *testing.T, cfg sdk.Config, args []string, f func(t *testing.T, c client.Client)) {
	t.Run("sdk.Runtime", func(t *testing.T) {
		rt, err := sdk.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		f(t, rt)
	})
	t.Run("rpcclient.Client", func(t *testing.T) {
		c, err := rpcclient.Start(context.Background(), rpcclient.Options{Bin: zotBin, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		f(t, c)
	})
}

// The session defaults, the capabilities and a prompt's own step limit
// and cost budget, alike in process and over zot rpc: PatchConfig merges
// (RFC 7396) and SetConfig replaces, a refused change sets nothing, a
// budget in the defaults ends a prompt with stop max_cost, and a prompt's
// own MaxCostUSD and MaxSteps replace the session's for that prompt only.
func TestConfigOneShape(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "loop.json")
	if err := os.WriteFile(script, []byte(loopScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := sdk.Config{Provider: "scripted", Script: script, CWD: dir, Permission: "allow"}
	args := []string{"--provider", "scripted", "--script", script, "--cwd", dir, "--permission", "allow"}
	both(t, cfg, args, func(t *testing.T, c client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		caps, err := c.Capabilities(ctx)
		if err != nil || caps.Provider != "scripted" || !slices.Contains(caps.Providers, "anthropic") ||
			!slices.Contains(caps.Features, "prompt_overrides") || !slices.Contains(caps.Features, "session_config") || caps.Limits.MaxSteps != 10000 {
			t.Fatalf("Capabilities: %+v, %v", caps, err)
		}
		d, err := c.Config(ctx)
		if err != nil || d.Model != "scripted" || d.MaxSteps != 50 || d.MaxCostUSD != nil {
			t.Fatalf("Config at start: %+v, %v", d, err)
		}
		d, err = c.PatchConfig(ctx, json.RawMessage(`{"max_steps":9,"max_cost_usd":0.0025}`))
		if err != nil || d.Model != "scripted" || d.MaxSteps != 9 || d.MaxCostUSD == nil || *d.MaxCostUSD != 0.0025 {
			t.Fatalf("PatchConfig: %+v, %v", d, err)
		}
		if _, err := c.PatchConfig(ctx, json.RawMessage(`[1]`)); wire.CodeOf(err) != wire.CodeInvalidParams {
			t.Errorf("PatchConfig with an array: %v", err)
		}
		if _, err := c.SetConfig(ctx, wire.SessionDefaults{MaxSteps: 5}); wire.CodeOf(err) != wire.CodeUnknownModel {
			t.Errorf("SetConfig without a model: %v", err)
		}
		if d, _ := c.Config(ctx); d.MaxSteps != 9 {
			t.Errorf("a refused change changed the defaults: %+v", d)
		}

		for _, tc := range []struct {
			name  string
			opts  client.PromptOptions
			stop  wire.StopReason
			code  wire.ErrorCode
			turns int64
		}{
			{"the session's budget", client.PromptOptions{}, wire.StopMaxCost, "", 3},
			{"the prompt's budget", client.PromptOptions{MaxCostUSD: 0.0015}, wire.StopMaxCost, "", 2},
			{"the prompt's step limit", client.PromptOptions{MaxSteps: 2}, "", wire.CodeMaxSteps, 2},
			{"the session's budget again", client.PromptOptions{}, wire.StopMaxCost, "", 3},
		} {
			res, err := client.Run(ctx, c, "loop", tc.opts)
			if wire.CodeOf(err) != tc.code || res == nil || res.Turns != tc.turns || (tc.stop != "" && res.Stop != tc.stop) {
				t.Errorf("%s: %+v, %v; want stop %q code %q after %d turns", tc.name, res, err, tc.stop, tc.code, tc.turns)
			}
		}
		for _, bad := range []client.PromptOptions{{MaxSteps: -1}, {MaxTokens: -4}, {MaxCostUSD: -1}} {
			if _, err := c.PromptWith(ctx, "loop", bad); wire.CodeOf(err) != wire.CodeInvalidParams {
				t.Errorf("PromptWith(%+v): %v, want invalid_params", bad, err)
			}
		}
		d, err = c.PatchConfig(ctx, json.RawMessage(`{"max_cost_usd":null,"max_steps":null}`))
		if err != nil || d.MaxCostUSD != nil || d.MaxSteps != 50 {
			t.Errorf("PatchConfig removing: %+v, %v", d, err)
		}
		d, err = c.SetConfig(ctx, wire.SessionDefaults{Model: "scripted", MaxSteps: 4})
		if err != nil || d.MaxSteps != 4 || d.Model != "scripted" {
			t.Errorf("SetConfig: %+v, %v", d, err)
		}
	})
}

// A prompt's own model, output limit and reasoning level reach its model
// request, alike in process and over zot rpc, and the next prompt's
// request has the session's again (Anthropic's Messages API on a
// loopback server that records each request's body).
func TestPromptOverridesOneShape(t *testing.T) {
	srv := providertest.NewBoundServer(t, "")
	dir := t.TempDir()
	cfg := sdk.Config{Provider: "anthropic", Model: "claude-sonnet-5-5", APIKey: "test-key", BaseURL: srv.URL, CWD: dir, NoTools: true}
	args := []string{"--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key", "--base-url", srv.URL, "--cwd", dir, "--no-tools", "--strict-mcp-config"}
	both(t, cfg, args, func(t *testing.T, c client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		_, _, _, before := srv.Stats()
		if _, err := client.Run(ctx, c, "first", client.PromptOptions{Model: "claude-haiku-5-5", MaxTokens: 321}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Run(ctx, c, "second", client.PromptOptions{Reasoning: "low"}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Run(ctx, c, "third", client.PromptOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Run(ctx, c, "fourth", client.PromptOptions{Reasoning: "sideways"}); wire.CodeOf(err) != wire.CodeInvalidParams {
			t.Errorf("a level the model does not take: %v", err)
		}
		_, _, _, reqs := srv.Stats()
		reqs = reqs[len(before):]
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		if reqs[0]["model"] != "claude-haiku-5-5" || reqs[0]["max_tokens"] != float64(321) {
			t.Errorf("first request: model %v, max_tokens %v; want claude-haiku-5-5, 321", reqs[0]["model"], reqs[0]["max_tokens"])
		}
		// A Claude 5 model thinks adaptively, at the effort of
		// output_config.effort (platform.claude.com/docs/en/build-with-claude/effort).
		if reqs[1]["model"] != "claude-sonnet-5-5" || effort(reqs[1]) != "low" {
			t.Errorf("second request: model %v, output_config %v; want the session's model, effort low", reqs[1]["model"], reqs[1]["output_config"])
		}
		if reqs[2]["model"] != "claude-sonnet-5-5" || reqs[2]["max_tokens"] == float64(321) || effort(reqs[2]) != "" {
			t.Errorf("third request: model %v, max_tokens %v, output_config %v; want the session's", reqs[2]["model"], reqs[2]["max_tokens"], reqs[2]["output_config"])
		}
		if st, err := c.State(ctx); err != nil || st.Model != "claude-sonnet-5-5" {
			t.Errorf("state after overridden prompts: %+v, %v", st, err)
		}
	})
}

// effort is an Anthropic request's output_config.effort, "" when absent.
func effort(req map[string]any) string {
	oc, _ := req["output_config"].(map[string]any)
	e, _ := oc["effort"].(string)
	return e
}
