// Package schema embeds zot's protocol schema, the single source of truth
// for every command, response, event, content block and error code of the
// `zot rpc` wire. The JSON files beside this one are JSON Schema draft
// 2020-12; each has an `$id` of the form https://zot.dev/schema/<file>.
package schema

import (
	"embed"
	"encoding/json"
	"fmt"
)

// FS holds the schema files, named as in this directory (e.g.
// "events.json"), and the schema of the scripted provider's script files,
// "script/script.json", which is not part of the wire.
//
//go:embed *.json script/*.json
var FS embed.FS

// BaseURL is the prefix of every schema file's `$id`.
const BaseURL = "https://zot.dev/schema/"

// Examples returns the examples of every definition of the schema file
// name (e.g. "events.json"), by definition name.
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
