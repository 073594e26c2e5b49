package sdk

import (
	"strings"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

// Middleware wraps the model calls and tool calls of a Runtime
// (Config.ModelMiddleware, Config.ToolMiddleware). A middleware gets the
// rest of the chain and returns a function that calls it: it sees what
// goes in and what comes out, times the call, and may answer in its
// place (a cache, a replay of recorded calls). The first middleware of a
// chain is the outermost.
//
//	timer := func(next sdk.ModelFunc) sdk.ModelFunc {
//		return func(ctx context.Context, call sdk.ModelCall, sink sdk.ModelSink) (*sdk.ModelResponse, error) {
//			start := time.Now()
//			resp, err := next(ctx, call, sink)
//			log.Printf("model call %d: %v, %v", call.Step, time.Since(start), err)
//			return resp, err
//		}
//	}

// ModelCall is one model call as middleware sees it: why it is made
// (Kind), the provider, the prompt's step (from 1; 0 for a compaction's)
// and the Request. The request must not be modified: pass a changed copy
// on.
type ModelCall = agent.ModelCall

// ModelCallKind says why a model call is made.
type ModelCallKind = agent.ModelCallKind

// The kinds of model call.
const (
	// ModelCallTurn is a step of a prompt.
	ModelCallTurn = agent.ModelCallTurn
	// ModelCallCompaction summarises the transcript.
	ModelCallCompaction = agent.ModelCallCompaction
)

// ModelRequest is what a model call asks: the model, the system prompt,
// the messages, the tools offered, the output limit and reasoning level.
type ModelRequest = llm.Request

// ModelResponse is what a model call answered: the assembled message, why
// it stopped, and the tokens it used.
type ModelResponse = llm.Response

// ModelEvent is one event of a model call's stream; Kind says which.
type ModelEvent = llm.Event

// ModelSink receives a model call's stream events as they arrive; it must
// not keep an event past the call.
type ModelSink = llm.Sink

// The kinds of ModelEvent, in the order a stream reports them.
const (
	// ModelEventStart: the provider accepted the call; once, first.
	ModelEventStart = llm.EventStart
	// ModelEventTextDelta: Text is the next piece of the answer.
	ModelEventTextDelta = llm.EventTextDelta
	// ModelEventThinkingDelta: Text is the next piece of reasoning.
	ModelEventThinkingDelta = llm.EventThinkingDelta
	// ModelEventToolStart: a tool call began (ToolID, ToolName).
	ModelEventToolStart = llm.EventToolStart
	// ModelEventToolArgsDelta: Text is the next piece of its arguments.
	ModelEventToolArgsDelta = llm.EventToolArgsDelta
	// ModelEventToolEnd: the call's arguments are complete.
	ModelEventToolEnd = llm.EventToolEnd
)

// ModelFunc makes one model call: it reports the stream's events to sink
// and returns the response (on failure, what arrived before it, with the
// error). A middleware that answers in the call's place reports the
// events a real call would have, ModelEventStart first.
type ModelFunc = agent.ModelFunc

// ModelMiddleware wraps a model call.
type ModelMiddleware = agent.ModelMiddleware

// ToolRun is one tool call about to run, after Approve: its ID, the tool's
// Name, the Args it runs with, and Progress, which reports progress text.
// To change the call, pass on a changed copy of the ToolRun you were
// given.
type ToolRun = agent.ToolRun

// ToolResult is what a tool call returned; IsError marks a failure the
// model reads.
type ToolResult = tools.Result

// ToolFunc runs one tool call. A returned error becomes an error result
// the model reads.
type ToolFunc = agent.ToolFunc

// ToolMiddleware wraps a tool call.
type ToolMiddleware = agent.ToolMiddleware

// ToolText returns a tool result holding text.
func ToolText(text string) ToolResult { return tools.Text(text) }

// ToolError returns an error tool result holding text.
func ToolError(text string) ToolResult { return tools.Errorf(text) }

// ToolResultText returns the text of a tool result, its text blocks
// joined.
func ToolResultText(r ToolResult) string {
	var b strings.Builder
	for _, blk := range r.Content {
		if t, ok := blk.(*llm.TextBlock); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
