package sdk

import (
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/settings"
)

// Config is everything a Runtime uses: the engine's session
// configuration, one definition for every door (Provider, Model, APIKey,
// BaseURL, Script, HTTPClient, ModelsFile, SessionFile, CWD, the prompts,
// Reasoning, MaxSteps, Tools, BashTimeout, compaction, EventBuffer,
// Approve and the permission settings, middleware, Extensions,
// MCPServers, MCP, Fleet, Log). Nothing else is read: no environment
// variables, no files under the user's home, no config rewrites (a Fleet
// client, a process of its own, finds zot-fleet in $PATH and its blob
// store under $ZOT_HOME unless Fleet names them). A zero field takes
// the default its comment states. AnswerApprovals is for doors that
// answer approvals themselves; a Runtime answers them through Approve.
type Config = engine.SessionConfig

// ApprovalRequest is a tool call waiting for the embedder's approval: its
// ID (as in the *wire.PermissionRequestEvent the prompt's events show just
// before Approve is asked), its ToolCallID (as in the *wire.ToolCallEvent),
// its Tool, and the Args it will run with.
type ApprovalRequest = engine.ApprovalRequest

// Approval is the answer to one ApprovalRequest: a Decision and, for
// Reject, a Reason shown to the model; with AllowAlways, Save (SaveProject
// or SaveEverywhere) also keeps it as a permission rule in the config.json
// of Config.Permissions.Home (docs/settings.md).
type Approval = engine.Approval

// PermissionRules say which permission rules a Runtime applies
// (Config.Permissions): none by default; rules given in code, the
// config.json of a zot home, a project's .zot/settings.json.
type PermissionRules = engine.PermissionRules

// Where an AllowAlways answer is saved (Approval.Save).
const (
	// SaveProject saves it for the session's folder.
	SaveProject = settings.ScopeProject
	// SaveEverywhere saves it for every folder.
	SaveEverywhere = settings.ScopeEverywhere
)

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
