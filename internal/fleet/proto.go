package fleet

import (
	"encoding/json"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/sandbox"
)

// Turn is one prompt the fleet runs: what a workflow of the turn needs
// and the daemon alone knows.
type Turn struct {
	// ID names the turn; it is the workflow's id.
	ID string `json:"id"`
	// Session is the session's id ("" for one kept in memory only).
	Session string `json:"session,omitempty"`
	// CWD is the session's working directory, where its tools run.
	CWD string `json:"cwd"`
	// Provider and Model say which model answers; the workers' provider
	// must be Provider.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Reasoning is the reasoning level, "" for the model's default.
	Reasoning string `json:"reasoning,omitempty"`
	// Offer is what the turn's steps offer the model. With Gates each
	// step asks the session first (a gate frame), before its model call,
	// and offers what the answer holds.
	Offer
	// Gates says the sender answers gate frames.
	Gates bool `json:"gates,omitempty"`
	// Transcript is the session's transcript, the prompt's user message
	// last, one message per element as a session file holds it.
	Transcript []json.RawMessage `json:"transcript"`
	// MaxSteps bounds the turn's model calls.
	MaxSteps int `json:"max_steps"`
	// Meter is the session's running usage and cost.
	Meter models.MeterState `json:"meter"`
	// Sandbox is the session's sandbox as the turn starts; nil confines
	// nothing but what the worker's own --sandbox does.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Parent, for a sub-agent's turn, is the id of the turn whose task
	// call ParentCall started it: the turn runs as a child workflow of
	// that turn's. "" for a turn of its own.
	Parent     string `json:"parent,omitempty"`
	ParentCall string `json:"parent_call,omitempty"`
}

// Sandbox is a session's sandbox policy as it travels to the workers
// (internal/sandbox.Policy; the workspace is the turn's working
// directory). A worker confines each tool call by it and by its own
// --sandbox, whichever confines more (sandbox.Policy.Meet).
type Sandbox struct {
	Mode     string   `json:"mode"`
	Network  bool     `json:"network"`
	Writable []string `json:"writable,omitempty"`
}

// SandboxOf is p as it travels.
func SandboxOf(p sandbox.Policy) *Sandbox {
	return &Sandbox{Mode: string(p.Mode), Network: p.Network, Writable: p.Writable}
}

// Policy is s in the working directory cwd; a mode that is none of
// sandbox.Modes is read-only (a worker never confines less than the
// session asked for because it cannot read the ask).
func (s *Sandbox) Policy(cwd string) sandbox.Policy {
	mode, err := sandbox.ParseMode(s.Mode)
	if err != nil {
		mode = sandbox.ReadOnly
	}
	return sandbox.Policy{Mode: mode, Network: s.Network, Workspace: cwd, Writable: s.Writable}
}

// Offer is what a step offers the model, and where the tools run.
type Offer struct {
	// System is the system prompt and Tools the tools the model is
	// offered.
	System string         `json:"system"`
	Tools  []llm.ToolSpec `json:"tools"`
	// Concurrent names the tools of Tools whose calls may run side by
	// side (tools.IsConcurrent): consecutive calls of them in one step
	// run at once, as in process.
	Concurrent []string `json:"concurrent,omitempty"`
	// Daemon names the tools of Tools that run in the daemon holding the
	// session (a client's, an extension's, the ACP client's file and
	// terminal tools, any the workers do not have): their calls come
	// back as call frames. The others run on the workers.
	Daemon []string `json:"daemon,omitempty"`
	// MCPTools names the server of each tool of Daemon that an MCP
	// server offers, and MCPServers are those servers' configurations: a
	// worker holding CWD runs their calls with a server of the same
	// configuration started there; the daemon answers those it cannot.
	// A configuration may hold secrets (its env, its headers): it goes
	// to the blob store, never into a workflow's history.
	MCPTools   map[string]string `json:"mcp_tools,omitempty"`
	MCPServers []mcphost.Server  `json:"mcp_servers,omitempty"`
}

// TurnResult is how a turn ended.
type TurnResult struct {
	// Transcript is the session's transcript at the turn's end.
	Transcript []json.RawMessage `json:"transcript"`
	// Meter is the running usage and cost at the turn's end.
	Meter models.MeterState `json:"meter"`
	// Code and Message are the turn's error, "" when it succeeded.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Aborted says the turn was aborted.
	Aborted bool `json:"aborted,omitempty"`
}

// Frame is one line between zot and zot-fleet client, both ways.
//
// zot sends submit (Turn), abort (Turn's id, the reason in Error) and
// await (the id of a turn an earlier zot submitted: its end is sent as
// done, without its events), verdict (the answer to an intercept) and
// result (the answer to a call); zot-fleet client sends intercept (a
// tool call about to run, for the session's interceptors), gate (a step
// about to make its model call, for the session's BeforeTurn
// interceptors; answered with a verdict holding the step's Offer), call (a call
// of one of the turn's Daemon tools, which the session runs: its
// interceptors, the tool, its events among the turn's, its result
// answered with result),
// ready once connected to the cluster, event (one event of a turn, in
// the turn's order, each once), done (the turn's result, after its last
// event) and error (a turn that could not be run, or, without a turn, the
// client's own failure).
type Frame struct {
	Type   string          `json:"type"`
	Turn   string          `json:"turn,omitempty"`
	Input  *Turn           `json:"input,omitempty"`
	Event  json.RawMessage `json:"event,omitempty"`
	Result *TurnResult     `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Request numbers an intercept and its verdict.
	Request string       `json:"request,omitempty"`
	Call    *ToolCall    `json:"call,omitempty"`
	Verdict *ToolVerdict `json:"verdict,omitempty"`
	// Output is a call's result: a tool message of one result block, as
	// a session file holds it. A result frame without it carries why the
	// call did not run in Error.
	Output json.RawMessage `json:"output,omitempty"`
	// Step is a gate's step.
	Step int `json:"step,omitempty"`
}

// ToolCall is a tool call a worker is about to run, which the session's
// interceptors (its guards, its extensions' intercepts, the approval,
// last) see in the daemon first.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// ArgsError says why the model's arguments are unusable (a call
	// frame's call is then answered without running).
	ArgsError string `json:"args_error,omitempty"`
}

// ToolVerdict is what the session's interceptors decided of a ToolCall.
type ToolVerdict struct {
	Block  bool            `json:"block,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Sandbox is the session's sandbox as the call was let through (it
	// may have changed since the turn began: /jail, a path allowed
	// always); nil keeps the turn's.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Grant is the real path the session's approval allowed this call
	// to write once, outside its sandbox ("" for none).
	Grant string `json:"grant,omitempty"`
	// Offer is, in a gate's verdict, what the step offers the model: the
	// session's tools as they stand once its gates have run.
	Offer *Offer `json:"offer,omitempty"`
}

// The frame types.
const (
	FrameSubmit    = "submit"
	FrameAbort     = "abort"
	FrameAwait     = "await"
	FrameVerdict   = "verdict"
	FrameResult    = "result"
	FrameIntercept = "intercept"
	FrameCall      = "call"
	FrameGate      = "gate"
	FrameReady     = "ready"
	FrameEvent     = "event"
	FrameDone      = "done"
	FrameError     = "error"
)
