// Package llm holds zot's provider-neutral model of a conversation and the
// interface every model provider implements.
//
// The agent loop owns a transcript of [Message] values and hands it to a
// [Provider] for each step. A provider turns the transcript into its vendor's
// request format, streams the answer, reports what arrives through a [Sink]
// as it arrives, and returns the assembled assistant [Message] with its
// [Usage] and [StopReason]. Nothing here knows about the wire protocol: the
// agent maps these values onto the generated wire types.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Role says who wrote a message.
type Role string

// The roles of a transcript. Tool results travel in a message of their own
// with RoleTool, one message per batch of tool calls.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a transcript.
type Message struct {
	Role    Role
	Content []Block
	// Time is when the message was added to the transcript, in UTC.
	Time time.Time
	// Meta carries zot's own annotations (for example "compaction":"true" on
	// a summary message). Providers ignore it.
	Meta map[string]string
}

// Block is one piece of message content. It is one of *TextBlock,
// *ThinkingBlock, *ImageBlock, *ToolCallBlock or *ToolResultBlock.
type Block interface{ isBlock() }

// TextBlock is plain text.
type TextBlock struct {
	Text string
	// Phase labels an assistant's text as intermediate commentary
	// ("commentary") or its final answer ("final_answer"), as OpenAI
	// Responses does; the provider that set it sends it back. Empty when
	// the provider gave none.
	Phase string
}

// ThinkingBlock is a model's reasoning. Providers that require reasoning to be
// sent back in tool loops (Anthropic signatures, OpenAI Responses encrypted
// reasoning items, Gemini thought signatures) keep what they need here;
// a provider drops blocks whose Provider is not its own when it builds a
// request.
type ThinkingBlock struct {
	// Provider names the provider that produced the block ("anthropic",
	// "openai-responses", "gemini", ...).
	Provider string
	// Text is the visible reasoning (or its summary).
	Text string
	// Raw marks Text as the model's own reasoning rather than a summary
	// of it: OpenAI Responses sends it back as reasoning_text content,
	// where a summary goes back as summary_text.
	Raw bool
	// Signature is the opaque signature that must accompany Text on replay
	// (Anthropic "signature", Gemini "thoughtSignature").
	Signature string
	// Redacted marks an Anthropic redacted_thinking block; its payload is Data.
	Redacted bool
	// Data is an opaque payload: Anthropic redacted thinking data or the
	// OpenAI Responses reasoning item's encrypted_content.
	Data string
	// ID is the provider's id for the reasoning item (OpenAI Responses);
	// for Chat Completions, the delta field the reasoning came in
	// ("reasoning_content" or "reasoning"), which it goes back in.
	ID string
	// Model is the model that produced the block; empty when not known
	// (transcripts from before zot recorded it). Blocks of another model
	// than the one called are not sent to Anthropic.
	Model string
	// Prefix fingerprints what came before the block in the request that
	// produced it (system prompt, tools, earlier messages), for a model
	// whose thinking is bound to it (Request.BoundThinking); empty
	// otherwise. The provider drops a block whose prefix changed.
	Prefix string
}

// ImageBlock is an image with its bytes.
type ImageBlock struct {
	// MIME is one of image/png, image/jpeg, image/gif, image/webp.
	MIME string
	Data []byte
}

// ToolCallBlock is the model asking for a tool to run.
type ToolCallBlock struct {
	// ID is the provider's id for the call; results refer to it.
	ID   string
	Name string
	// Args is the JSON object the model produced. When the model produced
	// text that is not valid JSON, Args holds "{}" and ArgsError says why,
	// so the agent can answer with a tool error the model can correct.
	Args      json.RawMessage
	ArgsError string
	// Signature is an opaque provider signature attached to the call
	// (Gemini thoughtSignature on a functionCall part).
	Signature string
	// Cut marks a call whose arguments the output limit cut short; Args is
	// "{}" and ArgsError says so. The call never runs.
	Cut bool
}

// ToolResultBlock is the outcome of one tool call.
type ToolResultBlock struct {
	CallID string
	// Name is the tool's name (Gemini needs it on replay).
	Name    string
	IsError bool
	// Content holds *TextBlock and *ImageBlock values.
	Content []Block
}

func (*TextBlock) isBlock()       {}
func (*ThinkingBlock) isBlock()   {}
func (*ImageBlock) isBlock()      {}
func (*ToolCallBlock) isBlock()   {}
func (*ToolResultBlock) isBlock() {}

// Text returns the concatenated text blocks of m.
func (m *Message) Text() string {
	var n int
	for _, b := range m.Content {
		if t, ok := b.(*TextBlock); ok {
			n += len(t.Text)
		}
	}
	buf := make([]byte, 0, n)
	for _, b := range m.Content {
		if t, ok := b.(*TextBlock); ok {
			buf = append(buf, t.Text...)
		}
	}
	return string(buf)
}

// ToolCalls returns the tool calls of m in order.
func (m *Message) ToolCalls() []*ToolCallBlock {
	var out []*ToolCallBlock
	for _, b := range m.Content {
		if c, ok := b.(*ToolCallBlock); ok {
			out = append(out, c)
		}
	}
	return out
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's arguments (an object schema).
	Schema json.RawMessage
}

// Request is one model call.
type Request struct {
	// Model is the provider's model id.
	Model string
	// System is the system prompt.
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens caps the output; 0 lets the provider pick from the catalog.
	MaxTokens int
	// Reasoning is the reasoning level, one of ReasoningLevels, or "" for
	// the model's default.
	Reasoning string
	// ReasoningModel tells providers that need different parameters for
	// reasoning models (OpenAI max_completion_tokens) which kind this is.
	ReasoningModel bool
	// ReasoningControl is how the model takes its reasoning setting, from
	// the catalog; "" lets the provider use its rule for ids it cannot
	// place.
	ReasoningControl ReasoningControl
	// AlwaysReasons says the model reasons on every call whatever the
	// request says (its reasoning counts against the output limit).
	AlwaysReasons bool
	// MaxOutput is the model's output limit from the catalog, 0 when
	// unknown. Providers that must send a max_tokens derive their default
	// from it when MaxTokens is 0.
	MaxOutput int
	// NoChatToolsReasoning says the model refuses function tools on OpenAI
	// Chat Completions unless reasoning is off (reasoning_effort "none").
	NoChatToolsReasoning bool
	// ThinksByDefault says the model thinks when not told otherwise.
	ThinksByDefault bool
	// BoundThinking says the model's thinking blocks are bound to the
	// conversation prefix (system, tools, earlier messages) they were
	// produced under; a provider drops those whose prefix changed.
	BoundThinking bool
	// OutputSchema, when set, is the JSON Schema the model's final answer
	// must follow. A provider with a structured-output field of its own
	// sends it there; the others rely on the instructions in System.
	OutputSchema json.RawMessage
}

// ReasoningLevels are the reasoning levels zot takes, as the vendors name
// them, from least to most. Which of them a model takes is a fact of the
// model catalog.
var ReasoningLevels = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// ReasoningControl names the request parameter that sets a model's
// reasoning.
type ReasoningControl string

// The reasoning controls.
const (
	// ReasoningBudget: a token budget (Anthropic thinking {type:"enabled",
	// budget_tokens}, Gemini 2.x thinkingBudget).
	ReasoningBudget ReasoningControl = "budget"
	// ReasoningEffort: an effort level (Anthropic adaptive thinking with
	// output_config.effort, Gemini 3 thinkingLevel, OpenAI
	// reasoning_effort).
	ReasoningEffort ReasoningControl = "effort"
)

// StopReason says why a model call ended.
type StopReason string

// The stop reasons. They are exactly the values of the wire's turn_end.stop.
const (
	StopEndTurn StopReason = "end_turn"
	StopToolUse StopReason = "tool_use"
	StopLength  StopReason = "length"
	StopError   StopReason = "error"
	StopAborted StopReason = "aborted"
	// StopRefusal: the model or the vendor's safety system declined to
	// answer; Response.Reason says why.
	StopRefusal StopReason = "refusal"
)

// Usage counts tokens of one model call.
type Usage struct {
	// Input is uncached input tokens.
	Input int
	// Output is output tokens, reasoning included.
	Output int
	// CacheRead is input tokens served from the provider's prompt cache.
	CacheRead int
	// CacheWrite is input tokens written to the provider's prompt cache.
	CacheWrite int
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite}
}

// Response is the outcome of a model call.
type Response struct {
	// Message is the assembled assistant message (Role is RoleAssistant).
	// After an error it holds what was received before the error.
	Message Message
	Stop    StopReason
	// Reason is the vendor's reason for a refusal (its explanation,
	// category or finish reason), or what a length stop cut.
	Reason string
	Usage  Usage
	// ContextFull says a length stop came from the context window, not
	// the output limit: input and output filled it (Anthropic's
	// model_context_window_exceeded). The transcript needs compacting
	// before it can go on.
	ContextFull bool
	// Finish is the vendor's own stop or finish reason as sent (end_turn,
	// stop, STOP, incomplete's reason...), "" when none came: what an
	// answer that ended with nothing in it is reported with.
	Finish string
}

// ContextFullReason is the Response.Reason of a stop at the context
// window.
const ContextFullReason = "the conversation filled the model's context window"

// EventKind names a streaming event.
type EventKind uint8

// The streaming events a provider reports, in the order they happen.
const (
	// EventStart: the provider accepted the request (response headers were
	// good) and output is about to stream. Reported once per call.
	EventStart EventKind = iota + 1
	// EventTextDelta: Text holds the next piece of answer text.
	EventTextDelta
	// EventThinkingDelta: Text holds the next piece of reasoning text.
	EventThinkingDelta
	// EventToolStart: a tool call began; ToolID and ToolName are set.
	EventToolStart
	// EventToolArgsDelta: Text holds the next piece of the call's JSON
	// arguments; ToolID is set.
	EventToolArgsDelta
	// EventToolEnd: the call's arguments are complete; ToolID is set.
	EventToolEnd
)

// Event is one streaming event. Which fields are set depends on Kind.
type Event struct {
	Kind     EventKind
	Text     string
	ToolID   string
	ToolName string
}

// Sink receives streaming events. It is called synchronously on the
// provider's goroutine; it must not retain the Event past the call.
type Sink func(Event)

// ListedModel is one model a provider's models endpoint lists, with the
// limits it gives (0 when it gives none).
type ListedModel struct {
	ID            string
	ContextWindow int
	MaxOutput     int
}

// Provider is one model vendor's API.
type Provider interface {
	// Name is the provider's id ("anthropic", "openai", ...).
	Name() string
	// Stream makes one model call. It reports events to sink as they arrive
	// and returns the assembled response. On error it still returns the
	// partial response received so far; the error is an *Error where the
	// failure came from the provider, or ctx.Err() after cancellation.
	Stream(ctx context.Context, req *Request, sink Sink) (*Response, error)
}
