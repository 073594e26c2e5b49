// Package tools holds zot's built-in tools and the registry that selects them.
//
// A tool takes JSON arguments (validated against its own JSON Schema by the
// tool itself), runs under a context that the agent cancels on abort, may
// report progress while it runs, and returns content blocks for the model.
package tools

import (
	"context"
	"encoding/json"

	"zot.dev/zot/internal/llm"
)

// Tool is one capability offered to the model.
type Tool interface {
	// Name is the tool's name as the model calls it ("read", "bash", ...).
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the JSON Schema (an object schema) of the arguments.
	Schema() json.RawMessage
	// Run executes one call. args is the JSON object from the model. Run
	// returns promptly once ctx is cancelled, killing anything it started.
	// A failure the model should see (bad args, missing file, non-zero exit)
	// is returned as a Result with IsError set, not as an error; an error
	// return is for failures of zot itself and is also shown to the model.
	Run(ctx context.Context, call Call) (Result, error)
}

// ReadOnly is implemented by a tool that may say it changes nothing
// (it only reads or computes): an MCP tool with the readOnlyHint
// annotation, an extension tool registered read_only. Such a tool runs
// where changes are refused (a session's read-only mode).
type ReadOnly interface {
	ReadOnly() bool
}

// IsReadOnly reports whether t says it changes nothing.
func IsReadOnly(t Tool) bool {
	r, ok := t.(ReadOnly)
	return ok && r.ReadOnly()
}

// Concurrent is implemented by a tool whose calls may run side by side:
// consecutive calls of such tools in one step start together (the task
// tool's sub-agents), each result reported as it comes. Calls of other
// tools run one after another, in order.
type Concurrent interface {
	Concurrent() bool
}

// IsConcurrent reports whether t's calls may run side by side.
func IsConcurrent(t Tool) bool {
	c, ok := t.(Concurrent)
	return ok && c.Concurrent()
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the model's id for the call.
	ID   string
	Args json.RawMessage
	// Progress, when non-nil, receives output while the tool runs. Chunks
	// are valid UTF-8 and throttled by the tool.
	Progress func(text string)
}

// Result is what a tool returns to the model.
type Result struct {
	// Content holds *llm.TextBlock and *llm.ImageBlock values.
	Content []llm.Block
	IsError bool
}

// Text returns a Result holding one text block.
func Text(s string) Result { return Result{Content: []llm.Block{&llm.TextBlock{Text: s}}} }

// Errorf returns an error Result holding one text block.
func Errorf(s string) Result {
	return Result{Content: []llm.Block{&llm.TextBlock{Text: s}}, IsError: true}
}
