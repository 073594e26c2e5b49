package agent

import (
	"context"
	"encoding/json"
	"errors"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

// Middleware wraps the agent's model calls and tool calls. Where an
// interceptor decides (block, rewrite), a middleware surrounds the call:
// it sees what goes in, what comes out, how long it took and how it
// failed, and may answer in the call's place: a tracer, a cache, an
// inspector, an executor that records calls and replays them.
//
// A chain is fixed when the agent is made (Config.ModelMiddleware,
// Config.ToolMiddleware). The first middleware of a chain is the
// outermost: it sees the call first and its result last. A middleware
// returns once its ctx ends: an aborted prompt ends only when the call it
// is in returns.

// ModelCallKind says why a model call is made.
type ModelCallKind string

// The kinds of model call.
const (
	// ModelCallTurn is a step of a prompt: the model answers or calls
	// tools.
	ModelCallTurn ModelCallKind = "turn"
	// ModelCallCompaction summarises the transcript (on request, near the
	// context limit, or when a request no longer fits).
	ModelCallCompaction ModelCallKind = "compaction"
)

// ModelCall is one model call, as model middleware sees it.
type ModelCall struct {
	// Kind says why the call is made.
	Kind ModelCallKind
	// Provider is the provider's id ("anthropic", "openai", ...).
	Provider string
	// Step counts the model calls of a prompt from 1; 0 for a
	// compaction's.
	Step int
	// Request is what the provider is asked. It must not be modified: a
	// middleware that changes the request passes a copy on.
	Request *llm.Request
}

// ModelFunc makes one model call. It reports the stream's events to sink
// as they arrive (sink must not keep an event past the call) and returns
// the assembled response; on failure the response holds what arrived
// before it (or is nil), and the error is an *llm.Error when the
// provider failed, or the context's error after an abort. It is
// llm.Provider.Stream with the call described.
//
// A middleware that answers in the call's place (a cache, a replay)
// reports the events a real call would have, in their order (an
// llm.EventStart first, then the deltas): the agent turns them into the
// prompt's events as it does a provider's.
type ModelFunc func(ctx context.Context, call ModelCall, sink llm.Sink) (*llm.Response, error)

// ModelMiddleware wraps a model call: given the rest of the chain, it
// returns the function that makes the call through it.
type ModelMiddleware func(next ModelFunc) ModelFunc

// ToolRun is one tool call about to run, as tool middleware sees it: after
// the interceptors, with the arguments they settled on. Calls that do not
// run (invalid arguments, an unknown tool, a blocked call, an aborted
// prompt) never reach the middleware.
type ToolRun struct {
	// ID is the call's id, as in its tool_call event.
	ID string
	// Name is the tool's name.
	Name string
	// Args is the JSON object the call runs with. It must not be
	// modified: a middleware that changes the arguments passes a copy on.
	Args json.RawMessage
	// Progress reports progress text, each piece a tool_progress event. A
	// middleware may wrap it to see the progress, or call it to replay
	// some.
	Progress func(text string)

	// tool is the tool that runs the call: a middleware that changes the
	// call passes on a changed copy of its ToolRun, which keeps it.
	tool tools.Tool
}

// ToolFunc runs one tool call. A Go error (as a tool's own Run returns
// one) becomes an error result the model reads ("the <tool> tool
// failed: ..."), like a Result with IsError.
type ToolFunc func(ctx context.Context, run ToolRun) (tools.Result, error)

// ToolMiddleware wraps a tool call: given the rest of the chain, it
// returns the function that runs the call through it.
type ToolMiddleware func(next ToolFunc) ToolFunc

// chainModel returns inner wrapped in mw, mw[0] outermost.
func chainModel(inner ModelFunc, mw []ModelMiddleware) ModelFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		if mw[i] != nil {
			inner = mw[i](inner)
		}
	}
	return inner
}

// chainTool returns inner wrapped in mw, mw[0] outermost.
func chainTool(inner ToolFunc, mw []ToolMiddleware) ToolFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		if mw[i] != nil {
			inner = mw[i](inner)
		}
	}
	return inner
}

// callModel makes a model call of kind (at step, for a turn) through the
// model middleware; without any it is the provider's Stream, called
// straight away: the ModelCall that describes the call to a middleware
// is made only for one.
func (a *Agent) callModel(ctx context.Context, kind ModelCallKind, step int, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	if a.modelCall == nil {
		return a.provider.Stream(ctx, req, sink)
	}
	return a.modelCall(ctx, ModelCall{Kind: kind, Provider: a.provider.Name(), Step: step, Request: req}, sink)
}

// streamProvider makes the provider's call: the innermost ModelFunc.
func (a *Agent) streamProvider(ctx context.Context, call ModelCall, sink llm.Sink) (*llm.Response, error) {
	return a.provider.Stream(ctx, call.Request, sink)
}

// useMiddleware composes the chains of cfg.
func (a *Agent) useMiddleware(model []ModelMiddleware, tool []ToolMiddleware) {
	if len(model) > 0 {
		a.modelCall = chainModel(a.streamProvider, model)
	}
	a.toolCall = chainTool(runTool, tool)
}

// compactionProvider is the agent's provider as compaction calls it: each
// summarising call goes through the model middleware.
type compactionProvider struct{ a *Agent }

// Name returns the provider's id.
func (p compactionProvider) Name() string { return p.a.provider.Name() }

// Stream makes one summarising call.
func (p compactionProvider) Stream(ctx context.Context, req *llm.Request, sink llm.Sink) (*llm.Response, error) {
	return p.a.callModel(ctx, ModelCallCompaction, 0, req, sink)
}

// runTool runs a tool call: the innermost ToolFunc.
func runTool(ctx context.Context, run ToolRun) (tools.Result, error) {
	if run.tool == nil {
		return tools.Result{}, errors.New("a tool middleware passed on a ToolRun it made itself, not a changed copy of its own: no tool to run")
	}
	return run.tool.Run(ctx, tools.Call{ID: run.ID, Args: run.Args, Progress: run.Progress})
}
