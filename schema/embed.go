// Package schema embeds zot's JSON Schemas (draft 2020-12), one folder per
// protocol, the single source of truth for each:
//
//   - rpc/: every command, response, event, content block and error code
//     of the `zot rpc` wire;
//   - ext/: every frame of the extension protocol, both ways, and the
//     extension manifest;
//   - script/: the scripted provider's script files, which are not a wire;
//   - acp/: the Agent Client Protocol's published schema (v1), vendored
//     unchanged, with SOURCE recording its version and sha256;
//   - daemon/: the daemon's own methods and errors on top of ACP.
//
// Every file's `$id` is [BaseURL] followed by its path in [FS], e.g.
// https://zot.dev/schema/rpc/events.json, so references between the files
// of a folder resolve by name.
package schema

import (
	"embed"
	"encoding/json"
	"fmt"
)

// FS holds the schema files by their path in this directory, e.g.
// "rpc/events.json" or "script/script.json".
//
//go:embed rpc/*.json ext/*.json script/*.json acp/schema.json acp/meta.json acp/SOURCE daemon/*.json
var FS embed.FS

// BaseURL is the prefix of every schema file's `$id`.
const BaseURL = "https://zot.dev/schema/"

// Examples returns the examples of every definition of the schema file
// name (e.g. "rpc/events.json"), by definition name.
func Examples(name string) (map[string][]json.RawMessage, error) {
	data, err := FS.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Defs map[string]struct {
			Examples []json.RawMessage `json:"examples"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	out := make(map[string][]json.RawMessage, len(doc.Defs))
	for def, d := range doc.Defs {
		out[def] = d.Examples
	}
	return out, nil
}
