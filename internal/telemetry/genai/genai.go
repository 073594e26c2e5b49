// Package genai gives the engine's seams their OpenTelemetry spans and
// metrics in the GenAI semantic conventions, recorded by
// internal/telemetry: invoke_agent per prompt (engine.HostConfig.WorkHook),
// chat per model call and execute_tool per tool call (the session
// middleware).
package genai

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/telemetry"
	"zot.dev/zot/internal/tools"
)

// AgentName is gen_ai.agent.name on zot's invoke_agent spans.
const AgentName = "zot"

// Recorder gives the engine's seams their spans in the GenAI semantic
// conventions (telemetry.SchemaURL's version): invoke_agent for each prompt (and a
// compaction's "invoke_agent zot" with zot.work compaction), chat for each
// model call under it, execute_tool for each tool call.
type Recorder struct {
	// Tracer records the spans and metrics.
	Tracer *telemetry.Tracer
	// Conversation names a session for gen_ai.conversation.id (its stored
	// id); "" leaves the attribute out.
	Conversation func(s *engine.Session) string
	// Cost is what a call's usage cost in US dollars, for zot.cost.usd;
	// nil leaves it out.
	Cost func(provider, model string, u llm.Usage) float64
}

// run is a prompt's totals, kept for its invoke_agent span while its
// model calls add to them.
type run struct {
	span    *telemetry.Span
	mu      sync.Mutex
	in, out int64
	cost    float64
	finish  string
	model   string
}

type runKey struct{}

// WorkHook is engine.HostConfig.WorkHook: the invoke_agent span of each
// piece of work, continuing the client's trace when the work carries
// one; spans are sent as the work ends.
func (g *Recorder) WorkHook(s *engine.Session, ctx context.Context, w engine.WorkInfo) (context.Context, func(error)) {
	if w.Traceparent != "" && telemetry.SpanFromContext(ctx) == nil {
		ctx = telemetry.WithTraceparent(ctx, w.Traceparent, w.Tracestate)
	}
	attrs := []telemetry.Attr{
		telemetry.String("gen_ai.operation.name", "invoke_agent"),
		telemetry.String("gen_ai.agent.name", AgentName),
		telemetry.String("gen_ai.provider.name", ProviderName(s.Provider())),
		telemetry.String("gen_ai.request.model", s.Model()),
	}
	if g.Conversation != nil {
		if id := g.Conversation(s); id != "" {
			attrs = append(attrs, telemetry.String("gen_ai.conversation.id", id))
		}
	}
	if !w.ID.IsZero() {
		id := w.ID.String()
		if w.ID.IsString() {
			_ = json.Unmarshal([]byte(id), &id)
		}
		attrs = append(attrs, telemetry.String("zot.prompt_id", id))
	}
	if !w.Prompt {
		attrs = append(attrs, telemetry.String("zot.work", "compaction"))
	} else if g.Tracer.CaptureContent() {
		attrs = append(attrs, telemetry.String("gen_ai.input.messages", messagesJSON([]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: w.Text}}}})))
	}
	ctx, span := g.Tracer.Start(ctx, "invoke_agent "+AgentName, telemetry.KindInternal, attrs...)
	r := &run{span: span}
	ctx = context.WithValue(ctx, runKey{}, r)
	return ctx, func(err error) {
		r.mu.Lock()
		span.Set(telemetry.Int("gen_ai.usage.input_tokens", r.in), telemetry.Int("gen_ai.usage.output_tokens", r.out), telemetry.Float("zot.cost.usd", r.cost))
		if r.finish != "" {
			span.Set(telemetry.Strings("gen_ai.response.finish_reasons", r.finish))
		}
		if r.model != "" {
			span.Set(telemetry.String("gen_ai.response.model", r.model))
		}
		r.mu.Unlock()
		failed(ctx, span, err)
		span.End()
		g.Tracer.Kick()
	}
}

// failed marks span failed by err, if err is not nil.
func failed(ctx context.Context, span *telemetry.Span, err error) {
	if err != nil {
		span.Fail(errorType(ctx, err), err.Error())
	}
}

// errorType is error.type for err: "aborted" for an abort, the
// provider's error kind, the HTTP status, else "error".
func errorType(ctx context.Context, err error) string {
	if agent.IsAborted(err) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return "aborted"
	}
	var le *llm.Error
	if errors.As(err, &le) {
		switch {
		case le.Kind != "":
			return le.Kind
		case le.Status != 0:
			return strconv.Itoa(le.Status)
		}
	}
	return "error"
}

// Middleware is the chat and execute_tool spans of a session's model and
// tool calls, for engine.HostConfig.SessionMiddleware.
func (g *Recorder) Middleware(s *engine.Session) ([]agent.ModelMiddleware, []agent.ToolMiddleware) {
	model := func(next agent.ModelFunc) agent.ModelFunc {
		return func(ctx context.Context, call agent.ModelCall, sink llm.Sink) (*llm.Response, error) {
			return g.chat(ctx, s, call, sink, next)
		}
	}
	tool := func(next agent.ToolFunc) agent.ToolFunc {
		return func(ctx context.Context, call agent.ToolRun) (tools.Result, error) {
			return g.tool(ctx, call, next)
		}
	}
	return []agent.ModelMiddleware{model}, []agent.ToolMiddleware{tool}
}

// chat is one model call's span.
func (g *Recorder) chat(ctx context.Context, s *engine.Session, call agent.ModelCall, sink llm.Sink, next agent.ModelFunc) (*llm.Response, error) {
	model := call.Request.Model
	attrs := []telemetry.Attr{
		telemetry.String("gen_ai.operation.name", "chat"),
		telemetry.String("gen_ai.provider.name", ProviderName(call.Provider)),
		telemetry.String("gen_ai.request.model", model),
		telemetry.String("zot.call.kind", string(call.Kind)),
	}
	if call.Step > 0 {
		attrs = append(attrs, telemetry.Int("zot.step", int64(call.Step)))
	}
	if call.Request.MaxTokens > 0 {
		attrs = append(attrs, telemetry.Int("gen_ai.request.max_tokens", int64(call.Request.MaxTokens)))
	}
	if g.Conversation != nil {
		if id := g.Conversation(s); id != "" {
			attrs = append(attrs, telemetry.String("gen_ai.conversation.id", id))
		}
	}
	if g.Tracer.CaptureContent() {
		if call.Request.System != "" {
			attrs = append(attrs, telemetry.String("gen_ai.system_instructions", partsJSON([]llm.Block{&llm.TextBlock{Text: call.Request.System}})))
		}
		attrs = append(attrs, telemetry.String("gen_ai.input.messages", messagesJSON(call.Request.Messages)))
	}
	ctx, span := g.Tracer.Start(ctx, "chat "+model, telemetry.KindClient, attrs...)
	start := time.Now()
	resp, err := next(ctx, call, sink)
	g.metrics(ctx, call, model, time.Since(start), resp, err)
	if resp != nil {
		u := resp.Usage
		in := int64(u.Input + u.CacheRead + u.CacheWrite) // input_tokens counts the cached ones too
		finish := resp.Finish
		if finish == "" {
			finish = string(resp.Stop)
		}
		span.Set(
			telemetry.String("gen_ai.response.model", model),
			telemetry.Int("gen_ai.usage.input_tokens", in),
			telemetry.Int("gen_ai.usage.output_tokens", int64(u.Output)),
		)
		if u.CacheRead > 0 {
			span.Set(telemetry.Int("gen_ai.usage.cache_read.input_tokens", int64(u.CacheRead)))
		}
		if u.CacheWrite > 0 {
			span.Set(telemetry.Int("gen_ai.usage.cache_creation.input_tokens", int64(u.CacheWrite)))
		}
		if finish != "" {
			span.Set(telemetry.Strings("gen_ai.response.finish_reasons", finish))
		}
		var cost float64
		if g.Cost != nil {
			cost = g.Cost(call.Provider, model, u)
			span.Set(telemetry.Float("zot.cost.usd", cost))
		}
		if g.Tracer.CaptureContent() {
			span.Set(telemetry.String("gen_ai.output.messages", messagesJSON([]llm.Message{resp.Message})))
		}
		if r, ok := ctx.Value(runKey{}).(*run); ok {
			r.mu.Lock()
			r.in += in
			r.out += int64(u.Output)
			r.cost += cost
			if call.Kind == agent.ModelCallTurn {
				r.finish, r.model = finish, model
			}
			r.mu.Unlock()
		}
	}
	failed(ctx, span, err)
	span.End()
	return resp, err
}

// metrics records a model call in the conventions' metrics.
func (g *Recorder) metrics(ctx context.Context, call agent.ModelCall, model string, d time.Duration, resp *llm.Response, err error) {
	attrs := []telemetry.Attr{
		telemetry.String("gen_ai.operation.name", "chat"),
		telemetry.String("gen_ai.provider.name", ProviderName(call.Provider)),
		telemetry.String("gen_ai.request.model", model),
	}
	in, out, cost := int64(-1), int64(-1), 0.0
	if resp != nil {
		u := resp.Usage
		in, out = int64(u.Input+u.CacheRead+u.CacheWrite), int64(u.Output)
		attrs = append(attrs, telemetry.String("gen_ai.response.model", model))
		if g.Cost != nil {
			cost = g.Cost(call.Provider, model, u)
		}
	}
	if err != nil {
		attrs = append(attrs, telemetry.String("error.type", errorType(ctx, err)))
		in, out = -1, -1
	}
	g.Tracer.RecordModelCall(d, in, out, cost, attrs...)
}

// tool is one tool call's span.
func (g *Recorder) tool(ctx context.Context, call agent.ToolRun, next agent.ToolFunc) (tools.Result, error) {
	attrs := []telemetry.Attr{
		telemetry.String("gen_ai.operation.name", "execute_tool"),
		telemetry.String("gen_ai.tool.name", call.Name),
		telemetry.String("gen_ai.tool.call.id", call.ID),
		telemetry.String("gen_ai.tool.type", "function"),
	}
	if server, tool, ok := mcpTool(call.Name); ok {
		attrs = append(attrs, telemetry.String("mcp.method.name", "tools/call"), telemetry.String("zot.mcp.server", server), telemetry.String("zot.mcp.tool", tool))
	}
	if g.Tracer.CaptureContent() {
		attrs = append(attrs, telemetry.String("gen_ai.tool.call.arguments", string(call.Args)))
	}
	ctx, span := g.Tracer.Start(ctx, "execute_tool "+call.Name, telemetry.KindInternal, attrs...)
	res, err := next(ctx, call)
	if g.Tracer.CaptureContent() && err == nil {
		span.Set(telemetry.String("gen_ai.tool.call.result", blocksText(res.Content)))
	}
	if err == nil && res.IsError {
		span.Fail("tool_error", truncate(blocksText(res.Content), 300))
	}
	failed(ctx, span, err)
	span.End()
	return res, err
}

// mcpTool splits an MCP tool's name (mcp__<server>__<tool>).
func mcpTool(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "__")
}

// ProviderName is gen_ai.provider.name for a zot provider: the
// conventions' well-known names where there is one.
func ProviderName(provider string) string {
	switch provider {
	case "openai-responses":
		return "openai"
	case "gemini":
		return "gcp.gemini"
	}
	return provider
}

// part is a message part in the conventions' JSON form of
// gen_ai.input.messages and gen_ai.output.messages.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
	MIME      string          `json:"mime_type,omitempty"`
}

type message struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

// messagesJSON is msgs in the conventions' JSON form (images by type
// only, never their bytes).
func messagesJSON(msgs []llm.Message) string {
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, message{Role: string(m.Role), Parts: parts(m.Content)})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func partsJSON(blocks []llm.Block) string {
	b, _ := json.Marshal(parts(blocks))
	return string(b)
}

func parts(blocks []llm.Block) []part {
	ps := make([]part, 0, len(blocks))
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.TextBlock:
			ps = append(ps, part{Type: "text", Content: b.Text})
		case *llm.ThinkingBlock:
			ps = append(ps, part{Type: "reasoning", Content: b.Text})
		case *llm.ImageBlock:
			ps = append(ps, part{Type: "blob", MIME: b.MIME})
		case *llm.ToolCallBlock:
			args := b.Args
			if !json.Valid(args) {
				args = nil
			}
			ps = append(ps, part{Type: "tool_call", ID: b.ID, Name: b.Name, Arguments: args})
		case *llm.ToolResultBlock:
			ps = append(ps, part{Type: "tool_call_response", ID: b.CallID, Response: blocksText(b.Content)})
		}
	}
	return ps
}

// blocksText is the text of blocks, an image as its type.
func blocksText(blocks []llm.Block) string {
	var sb strings.Builder
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.TextBlock:
			sb.WriteString(b.Text)
		case *llm.ImageBlock:
			sb.WriteString("[image " + b.MIME + "]")
		}
	}
	return sb.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
