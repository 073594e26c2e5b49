// Package client declares the one shape of a Go program's handle on a zot
// agent, whichever way the agent runs: [zot.dev/zot/sdk.Runtime] runs it
// inside the program, [zot.dev/zot/sdk/rpcclient.Client] drives a
// `zot rpc` subprocess. Both implement [Client], with the same method
// names, the same context arguments and the same event values (the
// generated types of [zot.dev/zot/sdk/wire]), so a program written against
// Client changes between them by changing one constructor:
//
//	impl, err := sdk.New(sdk.Config{Provider: "scripted"}) // in process
//	// impl, err := rpcclient.Start(ctx, rpcclient.Options{Args: []string{"--provider", "scripted"}}) // out of process
//	if err != nil {
//		return err
//	}
//	var c client.Client = impl // after the error check: a nil pointer makes a non-nil interface
//
// The interface lives in this small package, apart from both, because
// each implementation pulls in what the other's users do not want: sdk
// links the whole engine (providers, tools, the extension host), which a
// program that only spawns `zot rpc` should not have to build, and
// rpcclient is one program's view of a subprocess. This package imports
// nothing but [zot.dev/zot/sdk/wire]. (The wire package itself is the
// generated protocol: a hand-written interface there would read as part
// of the protocol, which it is not.)
//
// The method names are those of zot's first Go SDK (Prompt, Cancel,
// Compact, SetModel, State, Messages, Cost, ListModels, Close, and a
// channel of events). Every method that may cross a process boundary takes
// a context and returns an error, even where the in-process Runtime cannot
// fail but for [ErrClosed] or the context.
//
// # What differs between the two
//
// The contract below holds for both. Where they differ, it is because
// the protocol says so:
//
//   - Overlapping work. Runtime refuses a Prompt or Compact while other
//     work runs, with an error matching [ErrBusy]; `zot rpc` queues it
//     behind the running work (FIFO) and its events start when it runs.
//     Clear and SetModel fail with ErrBusy on both while work runs.
//   - A dead subprocess. When the `zot rpc` process exits before a piece
//     of work's done, its channel gets a *wire.ErrorEvent (code
//     "internal", saying how zot ended) and then a *wire.DoneEvent. An
//     in-process Runtime has no such failure.
//   - Cancelling by context. Both cancel a prompt when the context given
//     to Prompt ends, and only that prompt (the rpc client sends abort
//     with its prompt_id): running, it ends aborted; queued behind other
//     work in `zot rpc`, it is dropped and ends the same way.
//
// Only one of them has:
//
//   - Runtime: SetMessages (the protocol has no command to replace the
//     transcript), Provider, Model, CWD, Mode and Modes without a round
//     trip (State has the first four; the answer to rpc's set_mode lists
//     the modes), WaitMCP, Config.Approve (a callback in the process).
//   - rpcclient.Client: Hello and Ping (the handshake and a health check
//     of a process), AnswerPermission and Options.OnPermissionRequest
//     (approval over the wire), CancelAll and CancelWork (the queue
//     exists only there), Done (the process's end).
package client

import (
	"context"
	"encoding/json"
	"errors"

	"zot.dev/zot/sdk/wire"
)

// Client is a zot agent a program drives: one provider, one model, one
// working directory, one transcript. Its methods are safe for concurrent
// use. Every event channel it returns carries the work's events in order,
// ends with exactly one *wire.DoneEvent, and is then closed; a consumer
// that stops reading never blocks the Client's other methods (a Cancel
// still goes through).
type Client interface {
	// Prompt adds a user message with optional images and runs the agent
	// until the model stops, the step limit is reached, or the work is
	// cancelled (by Cancel, or by ctx ending). It returns once the work
	// is accepted; the channel carries its events.
	Prompt(ctx context.Context, text string, images []Image) (<-chan wire.Event, error)
	// PromptWith is Prompt with the options of one prompt: its images,
	// and the JSON Schema its final answer must follow (the parsed answer
	// is on the done's Result.Structured; see [Run]). A schema that is not
	// one fails with an error of code "invalid_params".
	PromptWith(ctx context.Context, text string, opts PromptOptions) (<-chan wire.Event, error)
	// Compact summarises older messages into one, keeping a recent tail,
	// with optional instructions for the summary. Its events end with
	// *wire.CompactDoneEvent (or *wire.ErrorEvent), then *wire.DoneEvent.
	Compact(ctx context.Context, instructions string) (<-chan wire.Event, error)
	// Steer adds text to the running prompt at its next step boundary
	// (after the current model call or its tool results); its
	// *wire.UserMessageEvent (Kind "steer") comes on that prompt's
	// channel, and Steer returns a nil channel. When no prompt runs it
	// becomes a prompt of its own and its channel is returned. Past the
	// bounds (64 KiB, 16 waiting) it fails with code "limit_exceeded".
	Steer(ctx context.Context, text string) (<-chan wire.Event, error)
	// InjectContext adds system context from source to the next model
	// call (of the running prompt, or the next one) and returns how many
	// contexts wait; code "limit_exceeded" past the bounds.
	InjectContext(ctx context.Context, text, source string) (int, error)
	// ExternalEvent runs an event from source carrying payload (any JSON
	// value) as a prompt of its own (Kind "event" on its user message);
	// the channel carries its events.
	ExternalEvent(ctx context.Context, payload json.RawMessage, source string) (<-chan wire.Event, error)
	// Cancel ends the running prompt or compaction, if any: its events
	// end with *wire.TurnEndEvent (stop "aborted") and *wire.DoneEvent.
	// It reports whether something was running.
	Cancel(ctx context.Context) (bool, error)
	// Config returns the session's defaults: the model, reasoning level,
	// step limit and cost budget a prompt uses when its PromptOptions do
	// not say (zot rpc's get_config). They are not config.json: they
	// start from the Runtime's Config or zot's flags and live as long as
	// the session.
	Config(ctx context.Context) (wire.SessionDefaults, error)
	// SetConfig replaces the session's defaults whole (Model and
	// MaxSteps required; an empty Reasoning is the model's default, a nil
	// MaxCostUSD no budget) and returns them. Nothing is set when a
	// value is refused: code "invalid_params", "unknown_model" for an
	// empty model, ErrBusy while work runs or waits.
	SetConfig(ctx context.Context, defaults wire.SessionDefaults) (wire.SessionDefaults, error)
	// PatchConfig changes the session's defaults with a JSON merge patch
	// (RFC 7396) of what Config returns, in its JSON form ({"max_cost_usd":
	// 1, "reasoning": null}): a member sets that default, a member set to
	// null takes it back to zot's, an absent member leaves it. It is
	// refused as SetConfig is, and with "invalid_params" for a patch that
	// is not a JSON object.
	PatchConfig(ctx context.Context, patch json.RawMessage) (wire.SessionDefaults, error)
	// Capabilities says what this zot and this session support: its
	// provider, the providers, the doors, the features and the limits.
	Capabilities(ctx context.Context) (wire.CapabilitiesResult, error)

	// Busy reports whether a prompt or compaction runs (or, over rpc,
	// waits in the queue).
	Busy(ctx context.Context) (bool, error)
	// Wait blocks until no prompt or compaction runs or waits, or ctx
	// ends.
	Wait(ctx context.Context) error

	// SetModel switches to another model of the same provider; it takes
	// any id the provider may serve. It fails with ErrBusy while work
	// runs, and with an error of code "unknown_model" for an empty id.
	SetModel(ctx context.Context, id string) error
	// SetMode switches the permission mode (ask, accept_edits, auto,
	// read_only): what a call of write, edit, bash and the other tools
	// that change things needs before it runs. The next such call sees it,
	// also while work runs. It fails for a mode the client does not offer.
	// State says the mode in use.
	SetMode(ctx context.Context, mode wire.PermissionMode) error
	// SetSandbox changes the sandbox of the tools (docs/sandbox.md), as
	// /jail and /unjail do: the mode (read-only, workspace-write, full,
	// off) unless it is empty, and whether commands reach the network
	// unless network is nil. The next tool call sees it, also while work
	// runs. It returns the sandbox in force, and fails with an error of
	// code "invalid_params" for a mode that is not one.
	SetSandbox(ctx context.Context, mode wire.SandboxMode, network *bool) (wire.SandboxState, error)
	// Clear drops the transcript and the cumulative usage. It fails with
	// ErrBusy while work runs.
	Clear(ctx context.Context) error
	// Undo undoes the last turn (turn 0), or turn turn (from 1: the n-th
	// user message) and every turn after it: the files they changed get
	// back what they held, and the transcript is cut back to before the
	// turn (docs/sessions.md, Undo). It fails with an error of code
	// "changed_outside", restoring nothing, when a file changed outside
	// zot since; "not_found" when there is no such turn; ErrBusy while
	// work runs.
	Undo(ctx context.Context, turn int) (wire.UndoResult, error)
	// Skills lists the session's skills (docs/skills.md): those offered to
	// the model, those shadowed by one of the same name found earlier,
	// those that could not be read, each with where it was found.
	Skills(ctx context.Context) (wire.ListSkillsResult, error)
	// Agents lists the agent profiles the session's task tool offers
	// (docs/agents.md): those offered, those shadowed by one of the same
	// name found earlier, the files that could not be used.
	Agents(ctx context.Context) (wire.ListAgentsResult, error)
	// Skill reads a skill's instructions (file empty) or a file or folder
	// inside its folder, as the skill tool gives them to the model. It
	// fails with an error of code "not_found" for a skill or file there is
	// not, "invalid_params" for a path that leads out of the skill's
	// folder.
	Skill(ctx context.Context, name, file string) (wire.GetSkillResult, error)
	// State returns a snapshot: provider, model, permission mode, working
	// directory, message count, busy, cumulative usage.
	State(ctx context.Context) (wire.StateResult, error)
	// Messages returns the transcript, oldest first.
	Messages(ctx context.Context) ([]wire.Message, error)
	// Cost returns the cumulative usage and cost since the start or the
	// last Clear.
	Cost(ctx context.Context) (wire.Usage, error)
	// ListModels returns the models of the provider, sorted by id, the
	// current one included.
	ListModels(ctx context.Context) ([]wire.ModelInfo, error)

	// Commands lists the slash commands of the running extensions.
	Commands(ctx context.Context) ([]wire.SlashCommand, error)
	// RunCommand runs an extension's slash command (name without the
	// slash, args the rest of the line) and carries out its answer. For
	// action "prompt" the prompt is started and the channel carries its
	// events, as Prompt's does; for every other action the channel is
	// nil and the result holds the text or panel to show. It fails with
	// an error matching [ErrNotFound] for a command neither zot nor an extension offers.
	RunCommand(ctx context.Context, name, args string) (wire.RunCommandResult, <-chan wire.Event, error)
	// Extensions describes the extensions found, in load order, with
	// their state.
	Extensions(ctx context.Context) ([]wire.ExtensionInfo, error)
	// ReloadExtensions stops the extensions, finds them again and starts
	// them, and returns them once they are ready. It fails with ErrBusy
	// while work runs.
	ReloadExtensions(ctx context.Context) ([]wire.ExtensionInfo, error)
	// PanelKey sends a key to the extension whose panel panelID is open
	// (text is the character for wire.PanelKeyRune); the extension
	// answers, if at all, with a *wire.PanelRenderEvent or
	// *wire.PanelCloseEvent outside any work (each implementation's
	// OnEvent option receives them). It fails with an error matching
	// [ErrNotFound] when no such panel is open.
	PanelKey(ctx context.Context, panelID string, key wire.PanelKey, text string) error
	// ClosePanel closes an open extension panel, as a user would.
	ClosePanel(ctx context.Context, panelID string) error

	// MCPServers lists the MCP servers, sorted by name, with their
	// status and the names the model sees for their tools.
	MCPServers(ctx context.Context) ([]wire.MCPServerInfo, error)
	// AddMCPServers adds MCP servers, each a wire.MCPServer or an
	// sdk.MCPServer (Go maps, a time.Duration timeout); one with the
	// name of a server already present replaces it. They start in the
	// background; their tools are offered from the next model call after
	// they are ready. It is never refused while work runs. It fails,
	// adding nothing, when a server is not usable (no name, neither or
	// both of a command and a URL, a bad type or URL): with an error of
	// code "invalid_params".
	AddMCPServers(ctx context.Context, servers ...MCPServer) error
	// RemoveMCPServer removes an MCP server: its tools are no longer
	// offered from the next model call on. It fails with an error
	// matching [ErrNotFound] when no server has that name.
	RemoveMCPServer(ctx context.Context, name string) error

	// ListSessions lists the stored sessions (zot's home, or the
	// Runtime's Config.SessionStore), newest first; cwd, when not empty,
	// keeps those of that working directory. The client's own is marked
	// Current.
	ListSessions(ctx context.Context, cwd string) ([]wire.SessionInfo, error)
	// LoadSession makes stored session id the client's: its transcript
	// replaces the one in memory, and later messages go to its file. It
	// fails with ErrBusy while work runs, and with errors of code
	// "not_found" and "session_locked" (another process has it open).
	LoadSession(ctx context.Context, id string) (wire.SessionInfo, error)
	// ForkSession makes a new stored session from the messages of one
	// (cmd.SessionID, default the client's own) before one of its user
	// prompts (cmd.AtIndex or cmd.AtMessageID, default the last), linked
	// to it as its fork, and loads it unless cmd.Load is false. The
	// result holds the fork and the prompt it left out.
	ForkSession(ctx context.Context, cmd wire.ForkSessionCommand) (*wire.ForkSessionResult, error)

	// RegisterTools adds tools the program runs itself (see [Tool] and
	// [NewTool]), replacing those of the same names it registered
	// before, and returns the names it has registered now, sorted. They
	// are offered to the model from its next step on. All or nothing: a
	// name another tool of the session holds fails with an error of code
	// "name_taken", a bad name or schema with "invalid_params".
	RegisterTools(ctx context.Context, tools ...Tool) ([]string, error)
	// UnregisterTools removes tools the program registered, by name (none
	// named: all of them), and returns the names left. A name it did not
	// register fails with an error matching [ErrNotFound].
	UnregisterTools(ctx context.Context, names ...string) ([]string, error)
	// Close cancels or finishes the running work, stops the extensions
	// and the MCP servers, and makes every later call fail with an error
	// matching [ErrClosed]. A channel of work still running still ends
	// with its *wire.DoneEvent; events its consumer had not taken by
	// then may be dropped. It is safe to call more than once.
	Close() error
}

// MCPServer is an MCP server as AddMCPServers takes it: a wire.MCPServer
// (mcp_add's form) or an sdk.MCPServer, each of which gives its wire
// form.
type MCPServer interface {
	WireMCPServer() wire.MCPServer
}

// PromptOptions are the options of one prompt (see Client.PromptWith).
type PromptOptions struct {
	// Images are attached to the message, in order.
	Images []Image
	// OutputSchema, when set, is a JSON Schema (draft 2020-12) the final
	// answer must follow: zot asks the provider for it in the provider's
	// own structured-output field where it has one, else by instructions,
	// checks the answer, and gives one that does not follow corrective
	// turns; the parsed answer is the done's Result.Structured. An answer
	// that never follows ends the prompt with an error event of code
	// "invalid_output" naming the schema path.
	OutputSchema json.RawMessage
	// OutputRetries is how many corrective turns such an answer gets;
	// nil means zot's default (2).
	OutputRetries *int

	// The fields below change this prompt's model calls only, leaving
	// the session's defaults (Config) alone; a zero value keeps the
	// session's. A value zot does not take fails the call with an error
	// of code "invalid_params"; any model id is taken, as SetModel takes
	// it.

	// Model is the model of this prompt, of the session's provider.
	Model string
	// Reasoning is the reasoning level of this prompt, one the model
	// takes (ListModels lists them).
	Reasoning string
	// MaxSteps is the most model calls this prompt may make (1 to
	// 10000) before it ends with an error of code "max_steps".
	MaxSteps int
	// MaxTokens is the output limit of each model call of this prompt.
	MaxTokens int
	// MaxCostUSD is this prompt's cost budget in US dollars: once a
	// model call brings the prompt's cost to it, the prompt ends after
	// that call, its turn_end with stop "max_cost" (wire.StopMaxCost).
	// A model without known prices is not held to it.
	MaxCostUSD float64
}

// Run sends a prompt with c.PromptWith, reads its events to the end and
// returns the prompt's record: stop reason, final text, turns, tool
// calls, duration, usage and cost of this prompt, and the structured
// answer when opts asked for one. When an error event came, Run returns
// the record (if the done carried one) and that error as a *wire.Error
// (wire.CodeOf gives its code, e.g. "invalid_output").
func Run(ctx context.Context, c Client, text string, opts PromptOptions) (*wire.PromptResult, error) {
	events, err := c.PromptWith(ctx, text, opts)
	if err != nil {
		return nil, err
	}
	return Result(events)
}

// Result reads a prompt's events to its done and returns the record the
// done carries, with the error of an error event among them (see Run).
func Result(events <-chan wire.Event) (*wire.PromptResult, error) {
	var res *wire.PromptResult
	var failure error
	for ev := range events {
		switch e := ev.(type) {
		case *wire.ErrorEvent:
			failure = &wire.Error{Code: e.Code, Message: e.Message}
		case *wire.DoneEvent:
			res = e.Result
		}
	}
	return res, failure
}

// Image is an image attached to a prompt.
type Image struct {
	// MIMEType is the format the caller claims; the bytes are sniffed and
	// only image/png, image/jpeg, image/gif and image/webp are accepted.
	MIMEType string
	// Data is the image's bytes.
	Data []byte
}

// ErrBusy matches, with errors.Is, every refusal because other work runs
// (or, over rpc, waits): a Prompt or Compact of a Runtime, a Clear or
// SetModel of either.
var ErrBusy = wire.ErrBusy

// ErrNotFound matches, with errors.Is, the error of a slash command no
// extension offers and of a panel no extension has open, from either
// implementation (its code is "not_found").
var ErrNotFound = &wire.Error{Code: wire.CodeNotFound, Message: "zot: not found"}

// ErrClosed matches, with errors.Is, the error of every call made after
// Close, from either implementation.
var ErrClosed = errors.New("zot: client closed")
