// Package schema embeds zot's protocol schema, the single source of truth
// for every command, response, event, content block and error code of the
// `zot rpc` wire. The JSON files beside this one are JSON Schema draft
// 2020-12; each has an `$id` of the form https://zot.dev/schema/<file>.
package schema

import "embed"

// FS holds the schema files, named as in this directory (e.g.
// "events.json"), and the schema of the scripted provider's script files,
// "script/script.json", which is not part of the wire.
//
//go:embed *.json script/*.json
var FS embed.FS

// BaseURL is the prefix of every schema file's `$id`.
const BaseURL = "https://zot.dev/schema/"
