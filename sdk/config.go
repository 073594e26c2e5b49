package sdk

import (
	"context"
	"net/http"
	"time"

	"zot.dev/zot/internal/engine"
)

// Config is everything a Runtime uses. Nothing else is read: no
// environment variables, no files under the user's home, no config
// rewrites. A zero field takes the default its comment states.
type Config struct {
	// Provider is the provider id: anthropic, openai, openai-responses,
	// gemini or scripted. Required.
	Provider string
	// Model is the model id; empty means the provider's default model.
	// Ids the catalog does not know are allowed (see docs/providers.md).
	Model string
	// APIKey is the provider credential. Empty sends none, which only
	// works for the scripted provider and for servers behind BaseURL that
	// need no key.
	APIKey string
	// BaseURL overrides the provider's endpoint (see docs/providers.md for
	// each vendor's convention).
	BaseURL string
	// Script is the path of a script for the scripted provider; empty
	// plays the built-in script.
	Script string
	// HTTPClient sends the provider's requests: a proxy, a transport that
	// records or counts them, other TLS settings. nil means zot's own,
	// shared client (bounded dial, TLS and header waits, no overall
	// timeout). Give a client without an overall Timeout: a streamed
	// answer may take minutes; zot bounds a silent stream itself.
	HTTPClient *http.Client
	// ModelsFile is a JSON file of models that add to or override the
	// built-in catalog; empty means none.
	ModelsFile string

	// SessionFile, when set, keeps the transcript in this file: it is
	// resumed from the file at New, and every message is appended (and
	// synced) when the prompt, compaction or clear that made it ends.
	// Empty means the transcript lives in memory only.
	SessionFile string

	// CWD is the working directory of the tools; empty means the
	// process's working directory. It is made absolute.
	CWD string
	// SystemPrompt replaces zot's default identity prompt.
	SystemPrompt string
	// AppendSystemPrompt is added after the system prompt.
	AppendSystemPrompt string
	// Reasoning is the reasoning level: none, minimal, low, medium, high,
	// xhigh or max, as the model takes them (get_models lists each
	// model's reasoning_levels); empty leaves the model's default.
	Reasoning string
	// MaxSteps bounds the model calls of one prompt; 0 means 50.
	MaxSteps int
	// Tools names the tools the model may use; nil means all built-in
	// tools (read, write, edit, bash, grep, find, ls). Unknown names are
	// an error.
	Tools []string
	// NoTools turns every tool off.
	NoTools bool
	// BashTimeout is the default timeout of a bash call; 0 means 120s.
	BashTimeout time.Duration

	// AutoCompactOff turns automatic compaction off.
	AutoCompactOff bool
	// CompactThreshold is the share of the context window above which a
	// prompt's end triggers compaction; 0 means 0.85.
	CompactThreshold float64

	// EventBuffer is the capacity of each prompt's event channel; 0
	// means 256.
	EventBuffer int

	// Approve, when set, is asked before every call of an ApprovalTools
	// tool, and the call waits for its answer. ctx ends when the prompt
	// is cancelled or ApprovalTimeout passes; the call is then rejected
	// whatever Approve answers. It is called from the agent's goroutine,
	// one call at a time. nil runs every call without asking.
	Approve func(ctx context.Context, req ApprovalRequest) Approval
	// ApprovalTools are the tools whose calls need approval; nil means
	// write, edit and bash.
	ApprovalTools []string
	// Permission is the first permission mode, named as zot's
	// --permission flag names it: "ask" (mode ask: Approve answers each
	// call), "allow" (mode auto: every call runs) or "deny" (mode
	// read_only, and SetMode takes no other). Empty means ask when Approve
	// is set, else allow. Runtime.SetMode changes the mode later.
	Permission string
	// ApprovalTimeout bounds one approval; 0 means no bound but the
	// prompt's own context.
	ApprovalTimeout time.Duration

	// ModelMiddleware wraps every model call, the first outermost: it
	// sees the request, the stream's events as they pass, the response,
	// the time taken and the error, and may answer in the call's place
	// (see ModelMiddleware).
	ModelMiddleware []ModelMiddleware
	// ToolMiddleware wraps every tool call that runs, after Approve, the
	// first outermost (see ToolMiddleware).
	ToolMiddleware []ToolMiddleware

	// Extensions are the extensions the Runtime runs (docs/extensions.md);
	// the zero value runs none.
	Extensions ExtensionConfig

	// MCPServers are MCP servers whose tools the model is offered
	// (docs/mcp.md); they start in the background when New returns.
	MCPServers []MCPServer
	// MCP tunes them and names mcpServers files to load.
	MCP MCPOptions
}

// ApprovalRequest is a tool call waiting for the embedder's approval: its
// ID (as in the *wire.PermissionRequestEvent the prompt's events show just
// before Approve is asked), its ToolCallID (as in the *wire.ToolCallEvent),
// its Tool, and the Args it will run with.
type ApprovalRequest = engine.ApprovalRequest

// Approval is the answer to one ApprovalRequest: a Decision and, for
// Reject, a Reason shown to the model.
type Approval = engine.Approval

// Decision is an approval's answer.
type Decision = engine.Decision

// The decisions an approval can make.
const (
	// Reject refuses the call: the model gets an error result saying so.
	Reject = engine.Reject
	// AllowOnce lets this call run.
	AllowOnce = engine.AllowOnce
	// AllowAlways lets this call run, and every later call of the same
	// tool without asking.
	AllowAlways = engine.AllowAlways
)
