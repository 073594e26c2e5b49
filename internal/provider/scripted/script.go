package scripted

import (
	"time"

	"zot.dev/zot/internal/llm"
)

// Script is what the provider plays: one [Turn] per user prompt, used in
// order; prompts after the last turn get the last turn again. A turn with
// a Match answers the prompts whose text contains it instead, wherever
// they come.
type Script struct {
	Turns []Turn
}

// Turn is the answer to one user prompt: one [Step] per model call the
// agent makes for that prompt (its tool loop). Calls after the last step get
// the last step again.
type Turn struct {
	Steps []Step
	// Match, when set, makes the turn answer only the prompts whose text
	// contains it (the first such turn wins); turns without one answer
	// the other prompts, in order, counted among themselves.
	Match string
}

// Step is one model call's answer.
type Step struct {
	// Thinking is streamed first as reasoning.
	Thinking string
	// Text is streamed after the thinking as the answer.
	Text string
	// Echo makes the answer "You said: " followed by the text of the last
	// user prompt; Text is then unused.
	Echo bool
	// Chunk is the most bytes one delta carries (a rune is never split, so
	// a delta may exceed Chunk by the rest of one rune); 0 means 8.
	Chunk int
	// Delay is waited before each delta.
	Delay time.Duration
	// ToolCalls are streamed after the text.
	ToolCalls []ToolCall
	// Usage is reported as the call's usage; nil estimates it at a token per
	// four bytes (rounded up) of the request and of the answer.
	Usage *llm.Usage
	// Stop is the stop reason; "" means tool_use when there are tool calls
	// and end_turn otherwise.
	Stop llm.StopReason
	// Error makes the call fail; see [Failure].
	Error *Failure
	// CutAfter, when positive, streams that many bytes of text (fewer to
	// keep a rune whole) and then ends the stream without its end marker:
	// the call fails with an *llm.Error of Kind "stream_cut".
	CutAfter int
}

// ToolCall is one tool call of a step.
type ToolCall struct {
	// ID is the call's id; "" means call_<turn>_<step>_<n>, all 0-based.
	ID string
	// Name is the tool's name.
	Name string
	// Args is the argument text streamed for the call. It need not be valid
	// JSON: text that is not a JSON object becomes Args "{}" with an
	// ArgsError, as with a real provider. "" means "{}".
	Args string
}

// Failure makes a step fail like an HTTP provider.
//
// With Status set, attempts fail before any output with that HTTP status.
// Retryable statuses (408, 429, 500, 502, 503, 504, 529) are retried with
// the attempt budget real providers use (4 attempts), and Times says how
// many attempts fail before one succeeds (0: all of them).
//
// With AfterBytes set instead, the call streams that many bytes of text
// (fewer to keep a rune whole) and then fails the way an error event in an
// SSE stream does. Output has gone out by then, so it is never retried.
type Failure struct {
	// Status is the HTTP status of a failure before output (100-599).
	Status int
	// Kind is the provider's error type; mid-stream failures default to
	// "overloaded_error".
	Kind string
	// Message is the error message; "" means a standard one.
	Message string
	// RetryAfter is the delay the failure asks for.
	RetryAfter time.Duration
	// Times is how many attempts fail before success; 0 means all.
	Times int
	// AfterBytes is the text streamed before a mid-stream failure.
	AfterBytes int
}
