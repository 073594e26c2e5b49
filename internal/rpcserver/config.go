package rpcserver

import (
	"encoding/json"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/mergepatch"
	"zot.dev/zot/sdk/wire"
)

// configResult is the answer of the config commands: the defaults now.
func configResult(d engine.Defaults) wire.ConfigResult {
	c := wire.SessionDefaults{Model: d.Model, Reasoning: d.Reasoning, MaxSteps: int64(d.MaxSteps)}
	if d.MaxCostUSD > 0 {
		budget := d.MaxCostUSD
		c.MaxCostUSD = &budget
	}
	return wire.ConfigResult{Config: c}
}

// defaultsOf is the engine's form of the wire's defaults.
func defaultsOf(c wire.SessionDefaults) engine.Defaults {
	d := engine.Defaults{Model: c.Model, Reasoning: c.Reasoning, MaxSteps: int(c.MaxSteps)}
	if c.MaxCostUSD != nil {
		d.MaxCostUSD = *c.MaxCostUSD
	}
	return d
}

// setConfig sets the session's defaults to c and answers with them.
func (s *Server) setConfig(id wire.ID, typ string, d engine.Defaults) {
	if err := s.sess.SetDefaults(d); err != nil {
		s.failErr(id, typ, err)
		return
	}
	s.respond(id, typ, configResult(s.sess.Defaults()))
}

// patchConfig merges patch (RFC 7396) into the session's defaults as
// get_config shows them, and sets the result.
func (s *Server) patchConfig(id wire.ID, typ string, patch json.RawMessage) {
	cur, err := json.Marshal(configResult(s.sess.Defaults()).Config)
	if err != nil {
		s.fail(id, typ, wire.CodeInternal, "patch_config: %s", oneLine(err))
		return
	}
	var p any
	if err := json.Unmarshal(patch, &p); err != nil {
		s.fail(id, typ, wire.CodeInvalidParams, "patch_config: patch: %s", oneLine(err))
		return
	}
	if _, ok := p.(map[string]any); !ok {
		s.fail(id, typ, wire.CodeInvalidParams, "patch_config: the patch must be an object")
		return
	}
	merged, err := mergepatch.Apply(cur, patch)
	if err != nil {
		s.fail(id, typ, wire.CodeInvalidParams, "patch_config: %s", oneLine(err))
		return
	}
	var c wire.SessionDefaults
	if err := json.Unmarshal(merged, &c); err != nil {
		s.fail(id, typ, wire.CodeInvalidParams, "patch_config: %s", oneLine(err))
		return
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(merged, &present); err != nil {
		s.fail(id, typ, wire.CodeInvalidParams, "patch_config: %s", oneLine(err))
		return
	}
	if _, ok := present["max_steps"]; !ok {
		c.MaxSteps = agent.DefaultMaxSteps // removed: zot's own default
	}
	s.setConfig(id, typ, defaultsOf(c))
}

// capabilities is the answer to get_capabilities.
func (s *Server) capabilities() wire.CapabilitiesResult {
	c := engine.Capabilities(s.sess.Provider())
	c.Limits.MaxLineBytes = int64(s.opts.MaxLineBytes)
	return c
}
