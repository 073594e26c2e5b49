package agent

import (
	"context"

	"zot.dev/zot/internal/outputschema"
)

// outputKey keys a prompt's output schema in its context.
type outputKey struct{}

// WithOutputSchema returns ctx carrying the schema the final answer of
// the prompt run under it must follow: every model call of that prompt
// asks the provider for it (Request.OutputSchema, for providers with a
// structured-output field of their own) and adds the schema's
// instructions to the system prompt (for the rest). Checking the answer
// is the caller's.
func WithOutputSchema(ctx context.Context, s *outputschema.Schema) context.Context {
	return context.WithValue(ctx, outputKey{}, s)
}

// outputSchemaOf returns the output schema ctx carries, or nil.
func outputSchemaOf(ctx context.Context) *outputschema.Schema {
	s, _ := ctx.Value(outputKey{}).(*outputschema.Schema)
	return s
}
