package engine

import (
	"context"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/sdk/wire"
)

// Executor runs a session's prompts somewhere other than the session's
// own goroutine: a fleet of workers whose durable turns outlive this
// process. The session keeps everything else (its queue, abort, the
// stamping and ordering of events, its file); the executor drives the
// prompt's steps with the agent's pure step (agent.Decide) and its
// effects (agent.RunStep, agent.RunCall), reports the prompt's events to
// emit as the agent's Prompt would, in its order, and leaves the agent
// holding the transcript and usage the turn ended with. It returns
// Prompt's error. A prompt with an output schema runs in this process.
type Executor interface {
	Prompt(ctx context.Context, t ExecTurn, emit func(wire.Event)) error
}

// ExecTurn is one prompt an Executor runs.
type ExecTurn struct {
	// Session is the session's id in its store; "" for a session kept
	// elsewhere.
	Session string
	// CWD is the session's working directory.
	CWD string
	// Agent is the session's agent: its transcript, model, tools and
	// system prompt as they stand, and where the turn's end is kept.
	Agent *agent.Agent
	// Text and Images are the prompt's; Source names the sender of an
	// external event.
	Text   string
	Images []llm.ImageBlock
	Source string
	// Sandbox is the session's sandbox: the policy its tools run under
	// wherever they run, which the session's approvals may widen (a path
	// allowed once or always); nil confines nothing.
	Sandbox *sandbox.Guard
}

// Resumer is an Executor that finishes, when a stored session is opened
// again, a turn that its previous process sent out and never saw end (it
// was killed mid-turn): Resume waits for the turn's end and leaves the
// agent holding it; the session then keeps it in its file. It returns
// nil at once when no turn of the session was left running.
type Resumer interface {
	Resume(ctx context.Context, t ExecTurn) error
}
