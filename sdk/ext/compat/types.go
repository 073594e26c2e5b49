package ext

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// CommandHandler answers a slash command; args is what the user typed
// after the command's name, trimmed. It runs on a goroutine of its own.
type CommandHandler func(args string) Response

// ToolHandler runs a tool on the arguments the model wrote, a JSON object
// the handler checks itself. It runs on a goroutine of its own.
type ToolHandler func(args json.RawMessage) ToolResult

// InteractiveToolHandler is a ToolHandler that also gets a context: it
// ends when zot cancels the call (the prompt was aborted or zot stopped
// waiting) or shuts the extension down, and the handler should return
// then. Its answer after that is not sent.
type InteractiveToolHandler func(ctx context.Context, args json.RawMessage) ToolResult

// EventHandler observes a lifecycle event subscribed with
// [Extension.On]. Events are handled one at a time, in the order zot sent
// them: a slow handler delays the next.
type EventHandler func(ev Event)

// EventResult is a tool's outcome as an event reports it. zot sends no
// event that carries one, so [Event.Result] stays nil.
type EventResult struct {
	// Content is the result's text and image blocks.
	Content []ToolContent
	// IsError says the tool failed.
	IsError bool
	// Truncated says blocks were left out or shortened.
	Truncated bool
}

// Event is a lifecycle event. zot fills in Name and, by event: Step
// (turn_start); Stop and Error (turn_end); ToolID, ToolName and ToolArgs
// (tool_call); Text (assistant_message). zot emits only session_start,
// turn_start, turn_end, tool_call and assistant_message, so the fields
// of the other events upstream zot knows stay zero.
type Event struct {
	// Name is the event: session_start, turn_start, turn_end, tool_call or
	// assistant_message.
	Name string
	// AgentRunID would name the run; zot does not send it.
	AgentRunID string
	// SessionID would name the session; zot does not send it.
	SessionID string
	// CWD would be the session's folder; zot does not send it (it is in
	// [HostInfo]).
	CWD string
	// Sequence would order the events; zot sends them in order instead.
	Sequence uint64
	// Queued would say a submitted prompt waited (user_prompt_submit,
	// which zot does not send).
	Queued bool
	// ImageCount would count a submitted prompt's images
	// (user_prompt_submit).
	ImageCount int
	// Status would be a tool result's, a compaction's or a sub-agent's;
	// zot sends none of these events.
	Status string
	// Reason would say why a session ended or a permission was decided;
	// zot sends neither event.
	Reason string
	// Source would say who decided a permission (permission_decision).
	Source string
	// Decision would be a permission's (permission_decision).
	Decision string
	// Stage would be when a permission was decided (permission_decision).
	Stage string
	// Result would be a finished tool call's (tool_result, which zot does
	// not send).
	Result *EventResult
	// Executed would say a finished tool call ran (tool_result).
	Executed *bool
	// CompactionID would name a compaction (pre_compact, post_compact,
	// which zot does not send).
	CompactionID string
	// MessageCount would count the messages a compaction saw.
	MessageCount *int
	// TokenEstimate would estimate the tokens a compaction saw.
	TokenEstimate *int
	// AgentID would name a sub-agent (subagent_start, subagent_stop,
	// which zot does not send).
	AgentID string
	// AgentName would be a sub-agent's name.
	AgentName string

	// Step is turn_start's step within the prompt, from 1.
	Step int
	// Stop is why the model call ended (turn_end).
	Stop string
	// Error is what failed, when the model call failed (turn_end).
	Error string

	// ToolID is tool_call's call id.
	ToolID string
	// ToolName is the tool tool_call calls.
	ToolName string
	// ToolArgs are the arguments the model wrote (tool_call).
	ToolArgs json.RawMessage
	// ToolPreview would be a confirmation request's preview
	// (tool_confirmation_requested, which zot does not send).
	ToolPreview string
	// ToolArgsRaw would be arguments that are not JSON; zot sends only
	// JSON arguments, in ToolArgs.
	ToolArgsRaw string

	// Text is assistant_message's text.
	Text string
}

// InterceptHandler decides on a tool call about to run: allow false
// refuses it, and the model sees reason as the tool's error.
type InterceptHandler func(toolName string, args json.RawMessage) (allow bool, reason string)

// ToolCallDecision is a verdict on a tool call about to run. The zero
// value lets it run unchanged.
type ToolCallDecision struct {
	// Block refuses the call; the model sees Reason as the tool's error.
	Block bool
	// Reason says why (with Block) or is only logged.
	Reason string
	// ModifiedArgs, when set and valid JSON, are the arguments the tool
	// runs with instead (a JSON object). Ignored with Block.
	ModifiedArgs json.RawMessage
}

// ToolCallHandler decides on a tool call about to run and may rewrite its
// arguments.
type ToolCallHandler func(toolName string, args json.RawMessage) ToolCallDecision

// BeforeAgentStartEvent is what upstream zot's before_agent_start
// intercept carries: the system prompt and the run it starts. zot has no
// such intercept, so a [BeforeAgentStartHandler] is never called.
type BeforeAgentStartEvent struct {
	// SystemPrompt is the system prompt about to be used.
	SystemPrompt string
	// SessionID names the session.
	SessionID string
	// AgentRunID names the run.
	AgentRunID string
	// CWD is the session's folder.
	CWD string
	// Provider is the run's provider.
	Provider string
	// Model is the run's model.
	Model string
}

// BeforeAgentStartHandler would return a system prompt to use instead, or
// nil to keep it. zot never calls it: see [BeforeAgentStartEvent].
type BeforeAgentStartHandler func(BeforeAgentStartEvent) *string

// TurnStartDecision is a verdict on a model call about to be made. The
// zero value lets it go on.
type TurnStartDecision struct {
	// Block refuses the turn; the prompt fails, quoting Reason.
	Block bool
	// Reason says why.
	Reason string
}

// TurnStartHandler decides on each model call before it is made; step
// counts the calls of one prompt from 1.
type TurnStartHandler func(step int) TurnStartDecision

// AssistantMessageDecision is a verdict on an assistant message about to
// be shown. The zero value shows it unchanged.
type AssistantMessageDecision struct {
	// Block hides the message from clients; the transcript keeps it.
	Block bool
	// Reason says why (logged).
	Reason string
	// ReplaceText, when not empty and not the message's text, is what
	// clients are shown instead; the transcript keeps what the model
	// wrote. Ignored with Block.
	ReplaceText string
}

// AssistantMessageHandler decides on an assistant message before clients
// see it.
type AssistantMessageHandler func(text string) AssistantMessageDecision

// ToolResult is what a tool returns to the model. Build one with
// [TextResult], [TextErrorResult] or [MarkdownResult], or fill Content
// with [Text], [Image] and [ImageBytes] blocks.
type ToolResult struct {
	// Content is what the model sees: text and image blocks.
	Content []ToolContent
	// IsError says the tool failed; Content says why.
	IsError bool
	// ActivateTools would reveal deferred tools; zot offers every tool
	// from the start, so it is not sent.
	ActivateTools []string
	// StructuredContent would be a JSON result for scripts; zot has no
	// structured results, so it is not sent: put what the model needs in
	// Content.
	StructuredContent json.RawMessage
}

// ToolContent is one block of a tool's result: Type "text" with Text, or
// Type "image" with MimeType and Data (base64).
type ToolContent struct {
	// Type is "text" or "image".
	Type string
	// Text is a text block's text.
	Text string
	// Format is a display hint for text ("markdown"); zot shows text as
	// it is and does not send it.
	Format string
	// MimeType is an image's format, e.g. image/png.
	MimeType string
	// Data is an image's bytes in standard base64.
	Data string
}

// Text is a text block.
func Text(s string) ToolContent { return ToolContent{Type: "text", Text: s} }

// Image is an image block of data already in base64; [ImageBytes] takes
// the raw bytes.
func Image(mimeType, base64Data string) ToolContent {
	return ToolContent{Type: "image", MimeType: mimeType, Data: base64Data}
}

// ImageBytes is an image block of the raw bytes data.
func ImageBytes(mimeType string, data []byte) ToolContent {
	return Image(mimeType, base64.StdEncoding.EncodeToString(data))
}

// TextResult is a successful result of one text block.
func TextResult(s string) ToolResult { return ToolResult{Content: []ToolContent{Text(s)}} }

// TextErrorResult is a failed result whose one text block says why.
func TextErrorResult(s string) ToolResult {
	r := TextResult(s)
	r.IsError = true
	return r
}

// MarkdownResult is a successful result of one text block written in
// Markdown; zot passes the text on as it is.
func MarkdownResult(s string) ToolResult {
	return ToolResult{Content: []ToolContent{{Type: "text", Text: s, Format: "markdown"}}}
}

// Panel is an interactive panel the extension owns: its id, a title, its
// lines and a footer.
type Panel struct {
	// ID names the panel in RenderPanel, ClosePanel and OnPanelKey.
	ID string
	// Title is shown above the lines.
	Title string
	// Lines are the panel's body.
	Lines []string
	// Footer is shown under the lines, e.g. the keys the panel takes.
	Footer string
}

// Response is a command's answer: what zot does next. Build one with
// [Prompt], [Insert], [Display], [OpenPanel], [Noop] or [Errorf].
type Response struct {
	// Action is "prompt", "insert", "display", "open_panel" or "noop" (the
	// default). "tool_prompt" is answered as an error: zot cannot run a
	// tool ahead of a prompt.
	Action string
	// Prompt is the user message to submit (prompt).
	Prompt string
	// ToolName is the tool of a tool_prompt.
	ToolName string
	// ToolArgs are the arguments of a tool_prompt's tool.
	ToolArgs json.RawMessage
	// Insert is the text to put into the user's input (insert).
	Insert string
	// Display is the note to show (display).
	Display string
	// OpenPanel is the panel to open (open_panel).
	OpenPanel *Panel
	// Error, when set, is shown as an error whatever the action.
	Error string
}

// Prompt submits text as the user's next message: the agent runs a turn
// on it.
func Prompt(text string) Response { return Response{Action: "prompt", Prompt: text} }

// ToolPrompt asks for the tool name to run on args (a JSON object) before
// text is submitted as a prompt. zot has no such action: the command
// answers with an error saying so.
func ToolPrompt(name string, args any, text string) Response {
	if name == "" || text == "" {
		return Errorf("a tool prompt needs a tool name and a prompt")
	}
	data, err := json.Marshal(args)
	if err != nil || len(data) == 0 || data[0] != '{' {
		return Errorf("a tool prompt's arguments must be a JSON object")
	}
	return Response{Action: "tool_prompt", Prompt: text, ToolName: name, ToolArgs: data}
}

// Insert puts text into the user's input without submitting it.
func Insert(text string) Response { return Response{Action: "insert", Insert: text} }

// Display shows text as a note; no model call, and the model never sees
// it.
func Display(text string) Response { return Response{Action: "display", Display: text} }

// OpenPanel opens a panel the extension owns; keys pressed in it come to
// the callbacks given to [Extension.OnPanelKey] for id.
func OpenPanel(id, title string, lines []string, footer string) Response {
	return Response{Action: "open_panel", OpenPanel: &Panel{ID: id, Title: title, Lines: lines, Footer: footer}}
}

// Noop does nothing: the extension did what the command asked itself.
func Noop() Response { return Response{Action: "noop"} }

// Errorf reports that the command failed; zot shows the message as an
// error.
func Errorf(format string, args ...any) Response {
	return Response{Action: "noop", Error: fmt.Sprintf(format, args...)}
}

// HostInfo is what zot said in hello_ack.
type HostInfo struct {
	// ProtocolVersion is the protocol's major version (1).
	ProtocolVersion int
	// ZotVersion is zot's version.
	ZotVersion string
	// Provider is the session's provider as the extension starts.
	Provider string
	// Model is the session's model as the extension starts.
	Model string
	// CWD is the session's working directory.
	CWD string
	// ExtensionDir is the manifest's folder.
	ExtensionDir string
	// DataDir is where the extension keeps its state: its own folder.
	DataDir string
}

// ToolOptions are the extras of [Extension.ToolWithOptions].
type ToolOptions struct {
	// OutputSchema is the JSON Schema of a structured result; zot has no
	// structured results and does not send it.
	OutputSchema json.RawMessage
	// Namespace would group tools; zot's tools are not grouped, and it is
	// not sent.
	Namespace string
	// NamespaceDescription would describe the group; not sent.
	NamespaceDescription string
	// NamespaceInstructions would tell the model how to use the group;
	// not sent.
	NamespaceInstructions string
	// Exposure (direct, codemode, deferred, model-only) is not sent: zot
	// offers every tool to the model directly.
	Exposure string
	// Deferred would hide the tool until a result activates it; zot
	// offers it from the start.
	Deferred bool
	// Interactive lets the tool wait for the user: zot waits for its
	// result for a day instead of the default 60 s.
	Interactive bool
}
