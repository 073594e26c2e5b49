package agent

import (
	"context"
	"encoding/json"

	"zot.dev/zot/internal/llm"
)

// Hooks let an embedder (the extension host, a policy layer) watch and
// steer the agent. Every field is optional. Hooks run on the agent's
// goroutine, in line with the prompt: a slow hook delays the prompt, and a
// hook must return promptly once ctx is cancelled. Events go to the emit
// function given to Prompt; there is no separate event hook.
type Hooks struct {
	// BeforeTurn runs before each model call of a prompt; step counts from
	// 1. A non-nil error blocks the call: the step ends with
	// turn_end{stop:"error", error:<the error>} and Prompt returns the
	// error (as an *Error with code internal, unless it is an *Error
	// itself).
	BeforeTurn func(ctx context.Context, step int) error
	// BeforeTool runs before each tool call that is about to run (not for
	// calls with invalid arguments or unknown tools). Its verdict can
	// block the call or rewrite its arguments.
	BeforeTool func(ctx context.Context, call ToolCall) ToolVerdict
	// AfterAssistantMessage runs on each assistant message before it is
	// added to the transcript and emitted as assistant_message, including
	// the partial text kept after a failure. Its verdict can replace the
	// message's text or block the message.
	AfterAssistantMessage func(ctx context.Context, msg *llm.Message) MessageVerdict
}

// ToolCall is a tool call about to run, as BeforeTool sees it.
type ToolCall struct {
	ID   string
	Name string
	// Args is the JSON object the model wrote.
	Args json.RawMessage
}

// ToolVerdict is BeforeTool's decision.
type ToolVerdict struct {
	// Block stops the call from running; its result is an error the model
	// sees, saying the call was blocked and why.
	Block bool
	// Reason says why the call was blocked.
	Reason string
	// Args, when non-nil, replaces the arguments the tool runs with. It
	// must be a JSON object; anything else fails the call with an error
	// result. The transcript keeps the arguments the model wrote.
	Args json.RawMessage
}

// MessageVerdict is AfterAssistantMessage's decision.
type MessageVerdict struct {
	// Block drops the message: it is not added to the transcript nor
	// emitted, its tool calls do not run, and the step ends with
	// turn_end{stop:"error"}; Prompt returns an *Error (code internal)
	// quoting Reason.
	Block bool
	// Reason says why the message was blocked.
	Reason string
	// Text, when non-nil, replaces the message's text: its text blocks are
	// removed and one block holding *Text is put where the first one was
	// (or first, when there was none and *Text is not empty). Tool calls
	// are kept.
	Text *string
}
