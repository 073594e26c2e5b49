package engine

import (
	"encoding/json"
	"strings"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/mergepatch"
	"zot.dev/zot/sdk/wire"
)

// WireDefaults is d in its wire form: the config get_config answers.
func WireDefaults(d Defaults) wire.SessionDefaults {
	c := wire.SessionDefaults{Model: d.Model, Reasoning: d.Reasoning, MaxSteps: int64(d.MaxSteps)}
	if d.MaxCostUSD > 0 {
		budget := d.MaxCostUSD
		c.MaxCostUSD = &budget
	}
	return c
}

// DefaultsOf is the engine's form of the wire's defaults.
func DefaultsOf(c wire.SessionDefaults) Defaults {
	d := Defaults{Model: c.Model, Reasoning: c.Reasoning, MaxSteps: int(c.MaxSteps)}
	if c.MaxCostUSD != nil {
		d.MaxCostUSD = *c.MaxCostUSD
	}
	return d
}

// PatchDefaults merges patch, a JSON merge patch (RFC 7396), into the
// session's defaults in their wire form and sets the result as
// SetDefaults does: a member set to null takes that default back to
// zot's (no reasoning level, agent.DefaultMaxSteps, no budget). A patch
// that is not a JSON object, or merges into defaults of the wrong types,
// fails with invalid_params, setting nothing.
func (s *Session) PatchDefaults(patch json.RawMessage) error {
	invalid := func(err error) error {
		return &wire.Error{Code: wire.CodeInvalidParams, Message: "patch_config: " + strings.Join(strings.Fields(err.Error()), " "), Err: err}
	}
	cur, err := json.Marshal(WireDefaults(s.Defaults()))
	if err != nil {
		return err
	}
	var p any
	if err := json.Unmarshal(patch, &p); err != nil {
		return invalid(err)
	}
	if _, ok := p.(map[string]any); !ok {
		return &wire.Error{Code: wire.CodeInvalidParams, Message: "patch_config: the patch must be an object"}
	}
	merged, err := mergepatch.Apply(cur, patch)
	if err != nil {
		return invalid(err)
	}
	var c wire.SessionDefaults
	if err := json.Unmarshal(merged, &c); err != nil {
		return invalid(err)
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(merged, &present); err != nil {
		return invalid(err)
	}
	if _, ok := present["max_steps"]; !ok {
		c.MaxSteps = agent.DefaultMaxSteps // removed: zot's own default
	}
	return s.SetDefaults(DefaultsOf(c))
}
