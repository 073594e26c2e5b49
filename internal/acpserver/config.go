package acpserver

import (
	"encoding/json"
	"slices"
	"strings"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/mergepatch"
)

// sessionConfig serves _zot/session/config: reads the session's prompt
// defaults, or replaces them (set) or merges a patch into them (RFC 7396).
func (h *conn) sessionConfig(req *jsonrpc.Request) jsonrpc.Reply {
	var p acp.SessionConfigRequest
	if err := decode(req, &p, "sessionId"); err != nil {
		return jsonrpc.Fail(err)
	}
	s, err := h.openSession(p.SessionID)
	if err != nil {
		return jsonrpc.Fail(err)
	}
	invalid := func(field, format string, args ...any) jsonrpc.Reply {
		return jsonrpc.Fail(withSession(jsonrpc.InvalidParams(field, format, args...), p.SessionID))
	}
	var next *acp.SessionDefaults
	field := "set"
	switch {
	case p.Set != nil && p.Patch != nil:
		return invalid("patch", "give set or patch, not both")
	case p.Set != nil:
		next = p.Set
	case p.Patch != nil:
		field = "patch"
		cur, err := json.Marshal(acpDefaults(s.eng.Defaults()))
		if err != nil {
			return invalid("patch", "%v", err)
		}
		patch, err := json.Marshal(p.Patch)
		if err != nil {
			return invalid("patch", "%v", err)
		}
		merged, err := mergepatch.Apply(cur, patch)
		if err != nil {
			return invalid("patch", "%v", err)
		}
		var d acp.SessionDefaults
		if err := json.Unmarshal(merged, &d); err != nil {
			return invalid("patch", "%v", err)
		}
		var present map[string]json.RawMessage
		if err := json.Unmarshal(merged, &present); err != nil {
			return invalid("patch", "%v", err)
		}
		if _, ok := present["maxSteps"]; !ok {
			d.MaxSteps = agent.DefaultMaxSteps
		}
		next = &d
	}
	if next != nil && next.Reasoning != nil && !slices.Contains(llm.ReasoningLevels, *next.Reasoning) {
		return invalid(field+".reasoning", "reasoning level %q is not one of %s", *next.Reasoning, strings.Join(llm.ReasoningLevels, ", "))
	}
	if next != nil {
		d := engine.Defaults{Model: next.Model, MaxSteps: int(next.MaxSteps)}
		if next.Reasoning != nil {
			d.Reasoning = *next.Reasoning
		}
		if next.MaxCostUsd != nil {
			d.MaxCostUSD = *next.MaxCostUsd
		}
		if err := s.eng.SetDefaults(d); err != nil {
			return jsonrpc.Fail(h.agent.errorOf(err, p.SessionID, ""))
		}
	}
	return jsonrpc.Result(acp.SessionConfigResponse{Config: acpDefaults(s.eng.Defaults())})
}

// acpDefaults is the ACP form of the engine's defaults.
func acpDefaults(d engine.Defaults) acp.SessionDefaults {
	out := acp.SessionDefaults{Model: d.Model, MaxSteps: int64(d.MaxSteps)}
	if d.Reasoning != "" {
		r := d.Reasoning
		out.Reasoning = &r
	}
	if d.MaxCostUSD > 0 {
		c := d.MaxCostUSD
		out.MaxCostUsd = &c
	}
	return out
}
