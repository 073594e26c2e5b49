package acpserver

import (
	"slices"
	"strings"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/llm"
)

// promptOverrides sets the prompt's own model, reasoning level, step and
// token limits and cost budget from the request's _meta.zot (model,
// reasoning, maxSteps, maxTokens, maxCostUsd), as zot rpc's prompt takes
// them.
func promptOverrides(in *engine.PromptInput, meta map[string]any) error {
	z, _ := meta["zot"].(map[string]any)
	if z == nil {
		return nil
	}
	str := func(key string) (string, error) {
		v, ok := z[key]
		if !ok || v == nil {
			return "", nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", jsonrpc.InvalidParams("_meta.zot."+key, "must be a string")
		}
		return s, nil
	}
	num := func(key string, integer bool) (*float64, error) {
		v, ok := z[key]
		if !ok || v == nil {
			return nil, nil
		}
		f, isNum := v.(float64)
		if !isNum || (integer && f != float64(int64(f))) {
			return nil, jsonrpc.InvalidParams("_meta.zot."+key, "must be a number")
		}
		return &f, nil
	}
	model, err := str("model")
	if err != nil {
		return err
	}
	level, err := str("reasoning")
	if err != nil {
		return err
	}
	var reasoning *string
	if level != "" && !slices.Contains(llm.ReasoningLevels, level) {
		return jsonrpc.InvalidParams("_meta.zot.reasoning", "reasoning level %q is not one of %s", level, strings.Join(llm.ReasoningLevels, ", "))
	}
	if level != "" {
		reasoning = &level
	}
	var steps, tokens *int64
	for _, k := range []struct {
		key string
		to  **int64
	}{{"maxSteps", &steps}, {"maxTokens", &tokens}} {
		f, err := num(k.key, true)
		if err != nil {
			return err
		}
		if f != nil {
			n := int64(*f)
			*k.to = &n
		}
	}
	cost, err := num("maxCostUsd", false)
	if err != nil {
		return err
	}
	if model == "" && reasoning == nil && steps == nil && tokens == nil && cost == nil {
		return nil
	}
	if err := in.SetOverrides(model, reasoning, steps, tokens, cost); err != nil {
		return jsonrpc.InvalidParams("_meta.zot", "%s", err.Error())
	}
	return nil
}
