package engine

import (
	"context"
	"io"
	"time"

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
	// ParentCall is, in a sub-agent's session, the id of the parent's
	// task call that started it (its prompt runs under that call's
	// context); "" in a session a door made.
	ParentCall string
	// MCP are the configurations of the session's MCP servers, for an
	// executor that runs their tools where the working directory is.
	MCP []MCPServer
}

// Resumer is an Executor that finishes, when a stored session is opened
// again, a turn that its previous process sent out and never saw end (it
// was killed mid-turn): Resume waits for the turn's end and leaves the
// agent holding it; the session then keeps it in its file. It returns
// nil at once when no turn of the session was left running.
type Resumer interface {
	Resume(ctx context.Context, t ExecTurn) error
}

// FleetConfig says which zot-fleet client runs a session's prompts and
// which Temporal cluster it submits them to: the flags of `zot-fleet
// client` (docs/fleet.md). A zero field takes the default its comment
// states.
type FleetConfig struct {
	// Binary is the zot-fleet program; "" looks for zot-fleet in $PATH.
	Binary string
	// Temporal is the cluster's frontend, HOST:PORT; "" means
	// 127.0.0.1:7233 (the dev server's).
	Temporal string
	// Namespace is the Temporal namespace; "" means default.
	Namespace string
	// TaskQueue carries the turns' workflows and model calls; "" means
	// zot.
	TaskQueue string
	// ToolQueue carries the tool calls, for the workers holding the
	// working directories; "" means TaskQueue.
	ToolQueue string
	// Blobs is the blob store directory every worker and the client
	// share; "" means zot-fleet's default, $ZOT_HOME/fleet/blobs.
	Blobs string
	// TLSCert and TLSKey are a client certificate and its key (PEM files)
	// for mTLS to the cluster; TLSCA is the CA bundle the cluster's
	// certificate is checked against (default: the system's), and
	// TLSServerName the name it must carry.
	TLSCert, TLSKey, TLSCA, TLSServerName string
	// Relay is the address the client's relay listens on, HOST:PORT,
	// where the workers post a turn's events and ask the session about
	// its calls; "" means 127.0.0.1 on a free port, which only workers
	// on the same machine reach. RelayURL is the URL the workers reach
	// it at; "" means http://Relay, which a Relay listening on every
	// address (0.0.0.0, [::]) cannot give.
	Relay, RelayURL string
	// HistoryEvents bounds the history of one run of a turn's workflow:
	// past it, or when the cluster suggests it, the turn continues as
	// new between two steps. 0 means zot-fleet's default (10,000
	// events); less than 0, the cluster's suggestion only.
	HistoryEvents int
	// ToolStartTimeout is how long a tool call waits for a worker of
	// ToolQueue to take it before it is answered as not run (the model
	// reads that no worker took it); 0 means zot-fleet's default, a
	// minute.
	ToolStartTimeout time.Duration
	// Turns is the folder where the id of each stored session's running
	// turn is kept until its end is, so that a process started again
	// after one killed mid-turn finishes the turn when it opens the
	// session (Resumer); "" means fleet/turns beside the SessionStore
	// folder (the zot daemon's, for a store in a zot home), and none
	// without a SessionStore.
	Turns string
	// ReadyTimeout bounds the wait for the client to reach the cluster;
	// 0 means 30 s.
	ReadyTimeout time.Duration
	// Log receives what the client writes on stderr; nil means the
	// session's Log, or nowhere.
	Log io.Writer
}
