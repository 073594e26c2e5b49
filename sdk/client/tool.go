package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Tool is a tool the program runs itself: registered with
// Client.RegisterTools, it is offered to the model with the session's
// other tools (one namespace: a name another tool holds is refused), and
// each call of it runs Run in the program. Calls go through the session's
// intercepts and approval (unless ReadOnly), and are bounded by Timeout
// and ended by a cancel as extension tools' are: Run's ctx ends then.
type Tool struct {
	// Name is what the model calls it: 1 to 64 letters, digits, _ or -.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Schema is the JSON Schema (an object schema) of its arguments;
	// empty means any object. NewTool derives it from a struct.
	Schema json.RawMessage
	// ReadOnly says the tool changes nothing: it runs in read-only mode
	// and is never put through approval.
	ReadOnly bool
	// Timeout bounds one call; 0 means zot's default (60 s).
	Timeout time.Duration
	// Run runs one call with the model's arguments (a JSON object). An
	// error is shown to the model as the call's failure (IsError).
	Run func(ctx context.Context, args json.RawMessage) (ToolResult, error)
}

// ToolResult is what a tool call returns to the model.
type ToolResult struct {
	// Text is the result's text.
	Text string
	// Images follow the text.
	Images []Image
	// IsError says the call failed; Text says why.
	IsError bool
}

// NewTool makes a Tool of a Go function whose input is a struct (or a
// pointer to one): the model's arguments are decoded into In with
// encoding/json (an argument that does not decode is an error result the
// model sees, and fn is not called), and the tool's Schema is derived
// from In's fields as SchemaOf does. fn's text is the result; its error
// is a failed call, with the error's text. It fails when In has no JSON
// Schema (see SchemaOf).
//
//	type weatherIn struct {
//		City string `json:"city" jsonschema:"the city's name"`
//	}
//	tool, err := client.NewTool("weather", "The weather in a city.",
//		func(ctx context.Context, in weatherIn) (string, error) { return "sunny in " + in.City, nil })
func NewTool[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) (Tool, error) {
	var zero In
	schema, err := SchemaOf(zero)
	if err != nil {
		return Tool{}, fmt.Errorf("tool %s: %w", name, err)
	}
	return Tool{
		Name:        name,
		Description: description,
		Schema:      schema,
		Run: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var in In
			if len(args) > 0 {
				if err := json.Unmarshal(args, &in); err != nil {
					return ToolResult{Text: "invalid arguments: " + err.Error(), IsError: true}, nil
				}
			}
			text, err := fn(ctx, in)
			if err != nil {
				return ToolResult{}, err
			}
			return ToolResult{Text: text}, nil
		},
	}, nil
}

// MustTool is NewTool that panics on an input type with no JSON Schema,
// for tools declared at package level.
func MustTool[In any](name, description string, fn func(ctx context.Context, in In) (string, error)) Tool {
	t, err := NewTool(name, description, fn)
	if err != nil {
		panic(err)
	}
	return t
}
