package ext

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"zot.dev/zot/sdk/extwire"
)

// HostInfo is what the host said in hello_ack: who runs the extension
// and where it keeps its files.
type HostInfo struct {
	// ProtocolVersion is the protocol's major version (1).
	ProtocolVersion int
	// ZotVersion is the host's version.
	ZotVersion string
	// Provider and Model are the session's as the extension starts.
	Provider, Model string
	// CWD is the session's working directory, where the user works. The
	// extension itself runs in its own folder, ExtensionDir.
	CWD string
	// ExtensionDir is the folder of the manifest; DataDir is where the
	// extension keeps its state (its own folder).
	ExtensionDir, DataDir string
}

func hostInfo(f *extwire.HelloAckFrame) HostInfo {
	return HostInfo{
		ProtocolVersion: int(f.ProtocolVersion),
		ZotVersion:      f.ZotVersion,
		Provider:        f.Provider,
		Model:           f.Model,
		CWD:             f.CWD,
		ExtensionDir:    f.ExtensionDir,
		DataDir:         f.DataDir,
	}
}

// Response is a command's answer: what the host does next. Build one
// with [Prompt], [Insert], [Display], [OpenPanel], [Noop] or
// [CommandError].
type Response struct {
	action extwire.CommandAction
	text   string
	panel  *extwire.Panel
	err    string
}

// Prompt submits text as the user's next message: the agent runs a turn
// on it.
func Prompt(text string) Response { return Response{action: extwire.CommandActionPrompt, text: text} }

// Insert puts text into the user's input without submitting it.
func Insert(text string) Response { return Response{action: extwire.CommandActionInsert, text: text} }

// Display shows text as a note; the model never sees it.
func Display(text string) Response { return Response{action: extwire.CommandActionDisplay, text: text} }

// OpenPanel opens p, an interactive panel the extension owns: keys come
// to [Extension.OnPanelKey] until it is closed.
func OpenPanel(p Panel) Response { return Response{action: extwire.CommandActionOpenPanel, panel: &p} }

// Noop does nothing: the extension did what the command asked itself.
func Noop() Response { return Response{action: extwire.CommandActionNoop} }

// CommandError reports that the command failed; the host shows the
// message as an error.
func CommandError(format string, args ...any) Response {
	return Response{action: extwire.CommandActionNoop, err: fmt.Sprintf(format, args...)}
}

// WithError returns r with an error the host shows whatever the action,
// e.g. a [Display] of what was done and an error about what was not.
func (r Response) WithError(format string, args ...any) Response {
	r.err = fmt.Sprintf(format, args...)
	return r
}

func (r Response) frame(id string) *extwire.CommandResponseFrame {
	f := &extwire.CommandResponseFrame{ID: id, Action: r.action, Error: r.err}
	if f.Action == "" {
		f.Action = extwire.CommandActionNoop
	}
	switch r.action {
	case extwire.CommandActionPrompt:
		f.Prompt = r.text
	case extwire.CommandActionInsert:
		f.Insert = r.text
	case extwire.CommandActionDisplay:
		f.Display = r.text
	case extwire.CommandActionOpenPanel:
		f.OpenPanel = r.panel
	}
	return f
}

// Panel is what a panel shows: its id, a title, its lines and a footer.
type Panel = extwire.Panel

// ToolResult is what a tool returns to the model. Build one with [Text],
// [ToolError] or [Image], or fill it in.
type ToolResult struct {
	// Content is the result's text and image blocks.
	Content extwire.ToolContents
	// IsError says the tool failed; Content says why.
	IsError bool
}

// Text is a result of one text block.
func Text(s string) ToolResult {
	return ToolResult{Content: extwire.ToolContents{&extwire.TextContent{Text: s}}}
}

// ToolError is a failed result whose text says why.
func ToolError(format string, args ...any) ToolResult {
	r := Text(fmt.Sprintf(format, args...))
	r.IsError = true
	return r
}

// Image is a result of one image (PNG, JPEG, GIF or WebP) with an
// optional caption before it.
func Image(mimeType string, data []byte, caption string) ToolResult {
	var r ToolResult
	if caption != "" {
		r.Content = append(r.Content, &extwire.TextContent{Text: caption})
	}
	r.Content = append(r.Content, &extwire.ImageContent{MIMEType: mimeType, Data: base64.StdEncoding.EncodeToString(data)})
	return r
}

func (r ToolResult) frame(id string) *extwire.ToolResultFrame {
	f := &extwire.ToolResultFrame{ID: id, Content: r.Content}
	if r.IsError {
		t := true
		f.IsError = &t
	}
	return f
}

// ToolCall is a tool call the host is about to run, as an intercept sees
// it.
type ToolCall struct {
	// ID is the call's id, Name the tool's name.
	ID, Name string
	// Args are the arguments the tool would run with (after the rewrites
	// of interceptors before this one).
	Args json.RawMessage
}

// ToolCallDecision is an intercept's verdict on a tool call. The zero
// value lets the call run unchanged.
type ToolCallDecision struct {
	// Block refuses the call; the model sees Reason as the tool's error.
	Block  bool
	Reason string
	// ModifiedArgs, when set, are the arguments the tool runs with
	// instead: a JSON object. Ignored with Block.
	ModifiedArgs json.RawMessage
}

// TurnDecision is an intercept's verdict on a model call about to be
// made. The zero value lets it go on.
type TurnDecision struct {
	// Block refuses the turn; the prompt fails quoting Reason.
	Block  bool
	Reason string
}

// MessageDecision is an intercept's verdict on an assistant message
// about to be shown. The zero value shows it unchanged.
type MessageDecision struct {
	// Block hides the message, for Reason.
	Block  bool
	Reason string
	// ReplaceText, when not empty, is the text clients are shown instead;
	// the transcript keeps what the model wrote. Ignored with Block.
	ReplaceText string
}

func verdict(id string, block bool, reason string) *extwire.EventInterceptResponseFrame {
	f := &extwire.EventInterceptResponseFrame{ID: id}
	if block {
		t := true
		f.Block, f.Reason = &t, reason
	}
	return f
}

// Event is a lifecycle event the extension subscribed to with
// [Extension.On]: which one it is, and its fields (Step for turn_start;
// Stop and Error for turn_end; ToolID, ToolName and ToolArgs for
// tool_call; Text for assistant_message).
type Event = extwire.EventFrame

// Lifecycle events to subscribe to with [Extension.On].
const (
	SessionStart     = extwire.EventNameSessionStart
	TurnStart        = extwire.EventNameTurnStart
	TurnEnd          = extwire.EventNameTurnEnd
	ToolCallEvent    = extwire.EventNameToolCall
	AssistantMessage = extwire.EventNameAssistantMessage
)

// PanelKey is a key pressed while one of the extension's panels had the
// focus.
type PanelKey struct {
	// PanelID is the panel's id.
	PanelID string
	// Key is the key's name (up, down, enter, esc, rune, …).
	Key extwire.KeyName
	// Text is the character typed, with Key rune.
	Text string
}

// Notice levels for [Extension.Notify].
const (
	LevelInfo    = extwire.NotifyLevelInfo
	LevelSuccess = extwire.NotifyLevelSuccess
	LevelWarn    = extwire.NotifyLevelWarn
	LevelError   = extwire.NotifyLevelError
)
