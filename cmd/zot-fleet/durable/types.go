// Package durable runs zot's turns on Temporal: a workflow per turn that
// drives the agent's pure step (agent.Decide, agent.AfterTools), each
// model call an activity that any worker runs, each tool call an activity
// on the task queue of the workers holding the working directory. The
// events leave the activities out of band, numbered, to the client that
// submitted the turn (relay.go); the transcript travels between them by
// reference in a blob store, so the workflow's history holds only
// references and the step's decisions.
package durable

import (
	"encoding/json"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
)

// WorkflowName is the turn's workflow type.
const WorkflowName = "zot.Turn"

// The activities' names.
const (
	StepActivity   = "zot.Step"
	ToolActivity   = "zot.Tool"
	AnswerActivity = "zot.Answer"
	AskActivity    = "zot.Ask"
)

// AbortSignal is the signal that aborts a turn.
const AbortSignal = "abort"

// AttachSignal is the signal that points a running turn at the client
// that now waits for it (an Attach): a client started again, by a daemon
// started again after the one that submitted the turn went away.
const AttachSignal = "attach"

// Attach is where a turn's later activities reach its client: they post
// their events to Relay, show calls at Intercept and Gate and hand the
// daemon's calls to Call, with the secret whose blob reference is Secret
// (the secret itself never enters the history). An address the turn
// began without ("" in its TurnInfo) stays "", and so does one Attach
// leaves "".
type Attach struct {
	Relay, Intercept, Gate, Call, Secret string
}

// attach points t at a's client.
func (t *TurnInfo) attach(a Attach) {
	set := func(dst *string, v string) {
		if *dst != "" && v != "" {
			*dst = v
		}
	}
	set(&t.Relay, a.Relay)
	set(&t.Intercept, a.Intercept)
	set(&t.Gate, a.Gate)
	set(&t.Call, a.Call)
	if a.Secret != "" {
		t.Secret = a.Secret
	}
}

// seqShift spaces the event numbers of a turn's activities: the k-th
// activity numbers its events from k<<seqShift on.
const seqShift = 24

// TurnInfo is what every activity of a turn is told about it.
type TurnInfo struct {
	ID    string
	Relay string // where events go (an http:// URL)
	// Intercept is where a tool call about to run is shown to the
	// session's interceptors (its approval among them) in the daemon; ""
	// runs calls without asking.
	Intercept string
	// Gate is where a step about to make its model call is shown to the
	// session's BeforeTurn interceptors in the daemon, which answer with
	// what the step offers; "" offers the turn's Offer at every step.
	Gate      string `json:",omitempty"`
	CWD       string
	Provider  string
	Model     string
	Reasoning string
	// Offer is the reference of the system prompt and the tools offered
	// (an Offer in JSON).
	Offer string
	// ToolQueue is the task queue of the workers holding CWD.
	ToolQueue string
	// Sandbox is the session's sandbox as the turn began; each call's
	// verdict from the session brings it as it stands then.
	Sandbox *fleet.Sandbox `json:",omitempty"`
	// Call is where a call of a tool living in the daemon is handed to
	// the daemon holding the session (DaemonCall); "" answers such calls
	// as not run.
	Call string `json:",omitempty"`
	// Secret is the reference, in the blob store, of the secret the
	// turn's client asks of every request to Relay, Intercept, Gate and
	// Call (as Authorization: Bearer): whoever else reaches those
	// addresses can neither post events into the turn nor show it calls
	// nor run the daemon's tools. The secret itself never enters a
	// workflow's history. "" sends none.
	Secret string `json:",omitempty"`
}

// Offer is what the model is offered at a step, and where the tools
// run (fleet.Offer); it lives in the blob store, never in the history:
// an MCP server's configuration in it may hold secrets.
type Offer = fleet.Offer

// TurnInput starts a turn's workflow.
type TurnInput struct {
	Turn TurnInfo
	// Transcript is the reference of the transcript (JSON Lines, as a
	// session file holds messages), the prompt's user message last.
	Transcript string
	UserIndex  int
	MaxSteps   int
	Meter      models.MeterState
	// HistoryEvents bounds the history of one run of the turn's
	// workflow: past it (or when the cluster suggests it), the turn
	// continues as new between two steps. 0 leaves it to the cluster's
	// suggestion.
	HistoryEvents int `json:",omitempty"`
	// ToolStartTimeout is how long a tool call waits for a worker of
	// the tool queue to take it before it is answered as not run; 0
	// means the package's ToolStartTimeout.
	ToolStartTimeout time.Duration `json:",omitempty"`
	// Continued is the state a turn carries into the next run of its
	// workflow; nil in its first run.
	Continued *Carry `json:",omitempty"`
}

// Carry is what a turn's workflow hands the next run when it continues
// as new, besides its transcript's reference and meter (kept in
// TurnInput): so that the turn goes on where it was, numbering its
// events on from where it stopped.
type Carry struct {
	// Step is the number of the next model call.
	Step int
	// Results are the references of the last step's tool results, which
	// the next model call reads.
	Results []string `json:",omitempty"`
	// Steps and Activities count the turn's model calls and activities
	// so far (Activities numbers the next activity's events).
	Steps, Activities int
	// Runs counts the runs before this one.
	Runs int
}

// TurnOutput is how a turn ended: its transcript is Transcript's, with
// Results (the references of tool results, in order) kept after it as
// one tool message when there are any.
type TurnOutput struct {
	Transcript string
	Results    []string
	Meter      models.MeterState
	Code       string
	Message    string
	Aborted    bool
	// Steps and Activities count the turn's model calls and activities;
	// Runs the runs of its workflow (more than one when it continued as
	// new).
	Steps, Activities, Runs int
}

// StepInput is one model call.
type StepInput struct {
	Turn       TurnInfo
	Transcript string
	// Results are the previous step's tool results, kept first.
	Results   []string
	UserIndex int
	Step      int
	MaxSteps  int
	Meter     models.MeterState
	Seq       int64
}

// StepOutput is what a model call decided.
type StepOutput struct {
	Action     agent.Action
	Calls      []Call
	Transcript string
	Meter      models.MeterState
	Code       string
	Message    string
	Aborted    bool
	// Offer is the reference of what the step offered when the session
	// changed it ("" for the turn's): the turn's calls and later steps
	// are made with it.
	Offer string `json:",omitempty"`
}

// Call is one tool call of a step.
type Call struct {
	ID        string
	Name      string
	Args      json.RawMessage
	ArgsError string `json:",omitempty"`
	Cut       bool   `json:",omitempty"`
	// Concurrent says the call may run beside its neighbours that may
	// too (a tool reporting tools.IsConcurrent, arguments that parsed).
	Concurrent bool `json:",omitempty"`
	// Daemon says the tool lives in the daemon holding the session: the
	// worker that takes the call hands it to the daemon (TurnInfo.Call).
	// When MCP names the MCP server that offers it, the worker runs it
	// with a server of that configuration started there, or answers
	// Fallback, and the call is then handed to the daemon (MCP "").
	Daemon bool   `json:",omitempty"`
	MCP    string `json:",omitempty"`
}

func (c Call) block() *llm.ToolCallBlock {
	return &llm.ToolCallBlock{ID: c.ID, Name: c.Name, Args: c.Args, ArgsError: c.ArgsError, Cut: c.Cut}
}

// ToolInput is one tool call.
type ToolInput struct {
	Turn TurnInfo
	Call Call
	Seq  int64
	// Verdict is the session's interceptors' verdict on the call, asked
	// before it (calls that run side by side are asked in order before
	// any starts); nil: the call asks them itself.
	Verdict *fleet.ToolVerdict `json:",omitempty"`
}

// AskInput shows calls about to run side by side to the session's
// interceptors, in order.
type AskInput struct {
	Turn  TurnInfo
	Calls []Call
}

// AskOutput holds the verdicts, in the calls' order.
type AskOutput struct {
	Verdicts []fleet.ToolVerdict
}

// ToolOutput is a tool call's result: the reference of a one-block tool
// message.
type ToolOutput struct {
	Result string
	// Fallback says why this worker did not run a call of an MCP server's
	// tool (the server does not start here, or offers no such tool): the
	// daemon answers it. Nothing of the call was emitted.
	Fallback string `json:",omitempty"`
	// Interrupted says the call was answered as interrupted: its worker
	// went away while it ran.
	Interrupted bool `json:",omitempty"`
}

// AnswerInput answers calls that did not run, or did not finish, with
// Text, and then emits Then.
type AnswerInput struct {
	Turn  TurnInfo
	Calls []Call
	Text  string
	Then  []json.RawMessage
	Seq   int64
}

// AnswerOutput holds the results' references, in the calls' order.
type AnswerOutput struct {
	Results []string
}
