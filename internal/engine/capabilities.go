package engine

import (
	"zot.dev/zot/internal/outputschema"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/sdk/wire"
)

// Features are what a client may use, by the names get_capabilities
// gives them; every door offers them all.
var Features = []string{"client_tools", "output_schema", "result_record", "steer", "inject_context", "external_event", "prompt_overrides", "cost_budget", "session_config", "sandbox", "undo", "sessions", "extensions", "mcp", "skills", "agents"}

// Doors are the ways into zot, by the names get_capabilities gives them.
var Doors = []string{"rpc", "acp", "daemon", "print", "sdk"}

// MaxStepsLimit is the most model calls a prompt or the session defaults
// may allow.
const MaxStepsLimit = 10000

// Capabilities is what this zot and a session of provider support, for
// a door's get_capabilities; the door sets Limits.MaxLineBytes when it
// reads lines. The lists are copies the caller may keep.
func Capabilities(provider string) wire.CapabilitiesResult {
	return wire.CapabilitiesResult{
		Provider:  provider,
		Providers: registry.Names(),
		Doors:     append([]string(nil), Doors...),
		Features:  append([]string(nil), Features...),
		Limits: wire.Limits{
			MaxSteps:         MaxStepsLimit,
			MaxOutputRetries: outputschema.MaxRetries,
		},
	}
}
