package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/outputschema"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/skills"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// ErrBusy is returned when work is refused because other work runs or
// waits, and by Clear and SetModel while it does.
var ErrBusy = wire.ErrBusy

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("zot: session closed")

// SessionConfig configures one session. It is also the Go SDK's Config
// (sdk.Config is this type), so one definition serves every door. A zero
// field takes the default its comment states; nothing else is read (no
// environment variables, no files under the user's home).
type SessionConfig struct {
	// Provider is the provider id: anthropic, openai, openai-responses,
	// gemini or scripted. Required.
	Provider string
	// Model is the model id; empty means the provider's default model.
	// Ids the catalog does not know are allowed (see docs/providers.md).
	Model string
	// APIKey is the provider credential. Empty means the host's
	// (ProviderSettings.APIKey); with neither, none is sent, which only
	// works for the scripted provider and for servers behind BaseURL that
	// need no key.
	APIKey string
	// BaseURL overrides the provider's endpoint (see docs/providers.md for
	// each vendor's convention); empty means the host's setting.
	BaseURL string
	// Script is the path of a script for the scripted provider; empty
	// means the host's setting, else the built-in script.
	Script string
	// HTTPClient sends the provider's requests: a proxy, a transport that
	// records or counts them, other TLS settings. nil means the host's
	// (HostConfig.HTTPClient), else zot's own shared client (bounded
	// dial, TLS and header waits, no overall timeout). Give a client
	// without an overall Timeout: a streamed answer may take minutes; zot
	// bounds a silent stream itself.
	HTTPClient *http.Client
	// ModelsFile is a JSON file of models that add to or override the
	// built-in catalog for this session; empty means the host's catalog.
	ModelsFile string

	// SessionFile, when set, keeps the transcript in this file: it is
	// resumed from the file when the session starts, and every message
	// is appended (and synced) when the prompt, compaction or clear that
	// made it ends. Empty means the transcript lives in memory only.
	SessionFile string
	// SessionStore, when set, keeps the transcript in that session store
	// (internal/store: a folder such as <zot home>/sessions, which every
	// door shares and `zot sessions list` lists): the session SessionID
	// names, resumed, or a new one with a fresh id (Session.StoredID).
	// It and SessionFile exclude each other.
	SessionStore string
	// SessionID names the stored session to resume; with SessionStore,
	// a new session of that id is made when there is none. With
	// SessionFile instead, it says that the file is that session's in the
	// store of the file's folder (<store>/<SessionID>.jsonl), as a door
	// that opens stored sessions by path tells it (Session.StoredID; Undo
	// keeps undone turns in that store).
	SessionID string
	// Owner is the principal a new session file belongs to (a token's
	// name on the daemon's network listener), recorded in its header and
	// listed by the store; empty for the user whose zot home holds it.
	Owner string

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
	// MaxCostUSD is the cost budget of each prompt that sets none of its
	// own (PromptInput.Overrides); 0 means none. A prompt that spends it
	// ends with a turn_end of stop max_cost.
	MaxCostUSD float64
	// Executor, when set, runs the session's prompts (see Executor); nil
	// runs them in this process.
	Executor Executor
	// Fleet, when set, runs the session's prompts as durable turns on a
	// Temporal fleet (docs/fleet.md): the Go SDK starts the zot-fleet
	// client it names and makes it the Executor, and ends it on Close.
	// (The engine's own doors do not read it; zot daemon --executor
	// temporal builds the same from its flags.)
	Fleet *FleetConfig
	// Tools names the tools the model may use; nil means all built-in
	// tools (read, write, edit, bash, grep, find, ls, and skill when there
	// are skills). Unknown names are an error.
	Tools []string
	// NoTools turns every built-in tool off.
	NoTools bool
	// BashTimeout is the default timeout of a bash call; 0 means 120s.
	BashTimeout time.Duration
	// Skills says where the session finds skills (docs/skills.md): their
	// names and descriptions go into the system prompt, and the skill
	// tool (one of the built-in tools, offered when there are skills)
	// loads them. The zero value finds none.
	Skills skills.Options
	// ProjectInstructions puts the project's instruction files (AGENTS.md,
	// else CLAUDE.md, in each folder from CWD's repository root down to
	// CWD) into the system prompt (docs/skills.md).
	ProjectInstructions bool

	// AutoCompactOff turns automatic compaction off.
	AutoCompactOff bool
	// CompactThreshold is the share of the context window above which a
	// prompt's end triggers compaction; 0 means 0.85.
	CompactThreshold float64

	// EventBuffer is the capacity of each prompt's event channel the Go
	// SDK returns; 0 means 256. (The engine's own doors do not read it.)
	EventBuffer int

	// Approve, when set, is asked before every call of an ApprovalTools
	// tool, and the call waits for its answer (see Approver). ctx ends
	// when the prompt is cancelled or ApprovalTimeout passes; the call is
	// then rejected whatever Approve answers. It is called from the
	// agent's goroutine, one call at a time. nil runs every call without
	// asking.
	Approve Approver
	// AnswerApprovals, instead of Approve, leaves each approval to the
	// door: the call waits until the door answers the request's
	// permission_request event with Session.AnswerApproval (zot rpc
	// --approve).
	AnswerApprovals bool
	// ApprovalTools are the tools whose calls need approval; nil means
	// write, edit and bash.
	ApprovalTools []string
	// ApproveOtherTools also puts through approval every tool that is not
	// built in and does not say it changes nothing (tools.IsReadOnly):
	// extension and MCP tools, which may change anything.
	ApproveOtherTools bool
	// Permission is the first permission mode, named as zot's
	// --permission flag names it: "ask" (mode ask: each call is asked
	// for), "allow" (mode auto: every call runs) or "deny" (mode
	// read_only, and SetMode takes no other). When set it decides Mode
	// and LockMode; an unknown name fails the session's start.
	Permission string
	// Mode is the first permission mode (modes.go), when Permission does
	// not name it; empty means ask when Approve or AnswerApprovals is
	// set, else auto.
	Mode PermissionMode
	// LockMode keeps the session in Mode: it offers no other
	// (--permission deny).
	LockMode bool
	// ApprovalTimeout bounds one approval; when it passes the call is
	// rejected. 0 means no bound but the prompt's own (an abort rejects).
	ApprovalTimeout time.Duration
	// Permissions are the permission rules the approval step applies to
	// every tool call before the mode and before anybody is asked
	// (docs/settings.md); the zero value has none.
	Permissions PermissionRules
	// Sandbox says what the tools may change, enforced by the kernel for
	// bash (sandbox.go, docs/sandbox.md); the zero value confines nothing.
	Sandbox SandboxConfig

	// ModelMiddleware wraps every model call, the first outermost: it
	// sees the request, the stream's events as they pass, the response,
	// the time taken and the error, and may answer in the call's place
	// (agent.ModelMiddleware): tracing, caching, recording and replaying.
	ModelMiddleware []agent.ModelMiddleware
	// ToolMiddleware wraps every tool call that runs, after the
	// interceptors and the approval, the first outermost
	// (agent.ToolMiddleware).
	ToolMiddleware []agent.ToolMiddleware

	// Extensions are the session's extensions (docs/extensions.md); the
	// zero value runs none (extensions.go).
	Extensions ExtensionConfig
	// MCPServers are MCP servers whose tools the model is offered
	// (docs/mcp.md); they start in the background as the session starts
	// (mcp.go).
	MCPServers []MCPServer
	// MCP tunes them and names mcpServers files to load.
	MCP MCPOptions
	// DeferStart holds the extensions and MCP servers back until Launch,
	// or until something needs them (a prompt, a command, listing them),
	// so that a door answers its first command before they compete with
	// it for the machine.
	DeferStart bool

	// Agents configures sub-agents: the task tool and the agent
	// profiles (subagents.go, docs/agents.md); the zero value offers no
	// task tool.
	Agents AgentsConfig

	// Log receives diagnostics (tool name conflicts, an extension that
	// failed to start, say); nil discards them.
	Log io.Writer
}

// Sink receives the events of one piece of work, in order, on the
// session's worker goroutine. ctx is the work's context: it ends when the
// work is aborted. A sink is called while the session stamps events (so
// that seq order is the order events reach sinks) and must not block for
// long: a door that applies backpressure does it in Work.Ready. The last
// event is the *wire.DoneEvent; it is delivered while the session's lock
// is held (so that a client that has seen it finds the session idle).
type Sink func(ctx context.Context, ev wire.Event)

// Work is one prompt or compaction to run. Exactly one of Prompt and
// Compact is set.
type Work struct {
	// ID is the id of the command that asked for the work: every event of
	// the work carries it as prompt_id. The zero ID stamps none.
	ID wire.ID
	// Prompt, when set, runs a prompt.
	Prompt *PromptInput
	// Compact, when set, compacts the transcript.
	Compact *CompactInput
	// Ctx, when set, is the parent of the work's context: the work is
	// aborted when it ends.
	Ctx context.Context
	// Events receives the work's events, the done last; the session ends
	// it after the done. The work waits for its room as its policy says.
	// Exactly one of Events and Sink is set.
	Events *Subscription[wire.Event]
	// Sink receives the work's events, for a door that translates them
	// into values of its own (onto a Subscription of those) or whose
	// transport has a queue of its own (zot rpc's writer).
	Sink Sink
	// Ready, when set, is called before each event of the work but the
	// done, outside every lock of the session: a door with a Sink waits
	// there for room in its output (returning when ctx, the work's
	// context, ends), so a client that reads slowly slows the agent down
	// and an abort is never held up by it.
	Ready func(ctx context.Context)
	// Traceparent and Tracestate are the W3C trace context the client
	// sent with the work (its _meta.traceparent and _meta.tracestate),
	// handed to the host's WorkHook: a tracer continues the client's
	// trace there.
	Traceparent, Tracestate string
}

// WorkInfo describes a piece of work to HostConfig.WorkHook.
type WorkInfo struct {
	// ID is the work's id (Work.ID).
	ID wire.ID
	// Prompt says it is a prompt; otherwise it is a compaction.
	Prompt bool
	// Text is the prompt's text ("" for a compaction).
	Text string
	// Traceparent and Tracestate are Work's.
	Traceparent, Tracestate string
}

// PromptInput is a user message.
type PromptInput struct {
	Text   string
	Images []llm.ImageBlock
	// Output, when set, is the schema the final answer must follow; the
	// parsed answer goes on the result record of the prompt's done.
	Output *outputschema.Schema
	// OutputRetries is how many corrective turns an answer that does not
	// follow Output gets.
	OutputRetries int
	// Source, when set, marks the prompt as an external event from there
	// (see Session.ExternalEvent).
	Source string
	// Overrides hold what the door asked of this prompt alone: see
	// SetOverrides.
	Overrides PromptOverrides
}

// CompactInput is a compaction request.
type CompactInput struct {
	// Instructions are the user's extra instructions for the summary.
	Instructions string
}

// Mode says what Submit does when other work runs or waits.
type Mode int

const (
	// Queue puts the work at the end of the queue.
	Queue Mode = iota
	// RefuseBusy refuses the work with ErrBusy.
	RefuseBusy
)

// Session is one conversation. Its methods are safe for concurrent use.
type Session struct {
	host        *Host
	catalog     *models.Catalog // the host's, or SessionConfig.ModelsFile's
	agent       *agent.Agent
	provider    string
	cwd         string
	log         io.Writer
	store       *sessionfile.File // nil without a session file
	storedID    string            // the id in SessionConfig.SessionStore, or ""
	exec        Executor          // SessionConfig.Executor, or a sub-agent's parent's
	parentCall  string            // a sub-agent's: the parent's task call that started it
	approval    *approval         // the mode and, when somebody answers, the approvals
	sbox        *sandboxState     // what the tools may change (sandbox.go)
	sboxMu      sync.Mutex        // held while sbox changes
	spills      *tools.Spills     // bash's spill files, removed by Close
	plug        plugins           // its extensions and MCP servers (extensions.go)
	cmds        commandState      // its slash commands (commands.go)
	panels      panelState        // its open panels (panels.go)
	undo        undoState         // what its turns changed in files (undo.go)
	clientTools clientToolState   // the tools its clients run (clienttools.go)
	inbox       agent.Inbox       // steers and contexts for the running prompt (steer.go)
	maxCost     float64           // the cost budget of a prompt that sets none (mu)
	prompt      promptParts       // its skills and project instructions (skills.go)
	agents      agentsState       // its task tool and children (subagents.go)

	// emitMu makes stamping an event and handing it on one step, so seq
	// order is delivery order; taken inside mu, never the other way.
	emitMu sync.Mutex
	seq    atomic.Int64
	// subs are the observers and subscriptions that see every event;
	// replaced whole under subMu, read without it.
	subs    atomic.Pointer[[]subscriber]
	subMu   sync.Mutex
	subNext uint64

	mu      sync.Mutex
	current *job   // running, from the moment it is accepted or dequeued until its done is delivered
	queue   []*job // waiting, in order
	// dropped were taken out of the queue by an abort; the worker ends
	// them, in send order, before any job sent after them runs. A dropped
	// job leaves this list when its done is delivered.
	dropped []*job
	sent    int           // jobs numbered so far
	working bool          // a worker goroutine is live
	idle    chan struct{} // closed when no worker is live; replaced when one starts
	refuse  string        // when set, new work is refused with this text
	closed  bool
	wg      sync.WaitGroup // the worker
}

// job is one piece of work in the session.
type job struct {
	n      int // numbers jobs in the order they were sent, from 1
	id     wire.ID
	ctx    context.Context
	cancel context.CancelFunc
	sink   Sink
	ready  func(ctx context.Context)
	run    func(ctx context.Context, emit func(wire.Event)) error
	// info describes the work to the host's WorkHook (nil without one).
	info *WorkInfo
	// dropped, when not empty, says why the job was dropped unrun.
	dropped string
	// ended is set once the job's last turn_end (a stop other than
	// tool_use) was delivered: an abort after it cannot change how the
	// work ended. abortAnswered is set when an abort told its caller the
	// job is aborted. Both are guarded by the session's emitMu.
	ended, abortAnswered bool
	// abortedEnd is set once a turn_end{aborted} of the job was delivered.
	abortedEnd bool
	// tally adds up a prompt's events into its result record; nil for a
	// compaction.
	tally *tally
	// event is set for a prompt made of an external event.
	event bool
}

// subscriber sees every event of the session: an observer's function
// (Observe) or a subscription (Subscribe).
type subscriber struct {
	key uint64
	fn  func(wire.Event)
	sub *Subscription[wire.Event]
}

// Submit accepts a piece of work. When nothing else runs or waits it
// starts at once; otherwise mode decides: Queue puts it at the end of the
// queue, RefuseBusy returns ErrBusy. accepted, when not nil, is called with
// the answer (started, or queued at a position) before any event of the
// work can reach its sink; it is called with the session's lock held and
// must not block. Submit returns ErrBusy, ErrClosed, or the refusal given
// to Shutdown, and then calls neither accepted nor the sink.
func (s *Session) Submit(w Work, mode Mode, accepted func(wire.StartResult)) error {
	run, err := s.workFunc(w)
	if err != nil {
		return err
	}
	switch {
	case w.Events != nil && (w.Sink != nil || w.Ready != nil):
		return errors.New("engine: work has both Events and a Sink")
	case w.Events != nil:
		w.Sink, w.Ready = eventsSink(w.Events)
	case w.Sink == nil:
		return errors.New("engine: work has no Events and no Sink")
	}
	parent := w.Ctx
	if parent == nil {
		parent = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.refuse != "":
		return errors.New(s.refuse)
	case mode == RefuseBusy && s.busyLocked():
		return ErrBusy
	}
	ctx, cancel := context.WithCancel(parent)
	s.sent++
	j := &job{n: s.sent, id: w.ID, ctx: ctx, cancel: cancel, sink: w.Sink, ready: w.Ready, run: run}
	if s.host.workHook != nil {
		j.info = &WorkInfo{ID: w.ID, Prompt: w.Prompt != nil, Traceparent: w.Traceparent, Tracestate: w.Tracestate}
		if w.Prompt != nil {
			j.info.Text = w.Prompt.Text
		}
	}
	if w.Prompt != nil {
		j.tally = &tally{}
		j.event = w.Prompt.Source != ""
	}
	if s.current == nil && len(s.queue) == 0 {
		if j.tally != nil {
			s.inbox.Open() // steers sent from now on reach it
		}
		// Work that can start now is current at once, so the session is
		// busy from the moment the caller hears it started.
		s.current = j
		if accepted != nil {
			accepted(wire.StartResult{Started: true})
		}
	} else {
		s.queue = append(s.queue, j)
		if accepted != nil {
			queued, pos := true, int64(len(s.queue))
			accepted(wire.StartResult{Started: false, Queued: &queued, Position: &pos})
		}
	}
	if !s.working {
		s.working = true
		s.idle = make(chan struct{})
		s.wg.Add(1)
		go s.work()
	}
	return nil
}

// workFunc returns what runs w on the agent.
func (s *Session) workFunc(w Work) (func(context.Context, func(wire.Event)) error, error) {
	switch {
	case w.Prompt != nil && w.Compact != nil:
		return nil, errors.New("engine: work is both a prompt and a compaction")
	case w.Prompt != nil:
		in := *w.Prompt
		if in.Text == "" && len(in.Images) == 0 {
			return nil, errEmptyPrompt
		}
		o, err := s.overrides(in.Overrides)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, emit func(wire.Event)) error {
			defer s.undo.beginTurn(s.agent.MessageCount())()
			if o != nil {
				ctx = agent.WithOverrides(ctx, o)
			}
			if in.Output != nil {
				return s.promptStructured(ctx, tallyOf(ctx), in, emit)
			}
			if s.exec != nil {
				return s.exec.Prompt(ctx, ExecTurn{Session: s.StoredID(), CWD: s.cwd, Agent: s.agent, Text: in.Text, Images: in.Images, Source: in.Source, Sandbox: s.sbox.guard, ParentCall: s.parentCall, MCP: s.mcpSpecs()}, emit)
			}
			if in.Source != "" {
				return s.agent.PromptEvent(ctx, in.Source, in.Text, emit)
			}
			return s.agent.Prompt(ctx, in.Text, in.Images, emit)
		}, nil
	case w.Compact != nil:
		instructions := w.Compact.Instructions
		return func(ctx context.Context, emit func(wire.Event)) error {
			return s.agent.Compact(ctx, instructions, emit)
		}, nil
	}
	return nil, errors.New("engine: work is neither a prompt nor a compaction")
}

// errEmptyPrompt refuses a prompt with neither text nor an image.
var errEmptyPrompt = wire.Sentinel(wire.CodeInvalidParams, "zot: empty prompt: give text or an image")

// busyLocked reports whether work runs, waits, or is still to be ended.
// The caller holds s.mu.
func (s *Session) busyLocked() bool {
	return s.current != nil || len(s.queue) > 0 || len(s.dropped) > 0
}

// Busy reports whether work runs, waits or has an ending still to come.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busyLocked()
}

// work is the worker: it runs jobs one at a time, in order, the current
// one and then the queue's head, and ends dropped ones in send order. It
// exits when nothing is left.
func (s *Session) work() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		// No job runs here. A dropped job sent before the current one (if
		// any) ends now, so every job ends in the order it was sent.
		if len(s.dropped) > 0 && (s.current == nil || s.dropped[0].n < s.current.n) {
			j := s.dropped[0]
			s.mu.Unlock()
			s.endDropped(j)
			continue
		}
		j := s.current
		if j == nil && len(s.queue) > 0 {
			j = s.queue[0]
			s.queue = s.queue[1:]
			s.current = j
			if j.tally != nil {
				s.inbox.Open()
			}
		}
		if j == nil {
			s.working = false
			close(s.idle)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.runJob(j)
	}
}

// runJob runs one job, delivering its events as they happen; a failure
// adds an error event, the session file is brought up to date, and done
// comes last.
func (s *Session) runJob(j *job) {
	emit := func(ev wire.Event) { s.deliver(j, ev) }
	ctx := withEmitter(j.ctx, emit)
	if j.tally != nil {
		j.tally.start = time.Now()
		ctx = context.WithValue(ctx, tallyKey{}, j.tally)
	}
	var end func(error)
	if j.info != nil {
		ctx, end = s.host.workHook(s, ctx, *j.info)
	}
	err := s.protect(j, ctx, emit)
	if end != nil {
		end(err)
	}
	if err != nil && !agent.IsAborted(err) {
		emit(errorEvent(err))
	}
	s.emitMu.Lock()
	owed := j.abortAnswered && !j.abortedEnd
	s.emitMu.Unlock()
	if owed {
		// An abort said this work is aborted, and it finished without a
		// turn_end saying so (a compaction that completed an instant
		// before): the ending the abort promised still comes.
		emit(&wire.TurnEndEvent{Stop: wire.StopAborted, Error: "aborted"})
	}
	if perr := s.persist(); perr != nil {
		emit(&wire.ErrorEvent{Message: perr.Error(), Code: wire.CodeInternal})
	}
	s.finish(j)
	if s.store != nil {
		// Every message is in the file already (see deliver); the disk
		// sync waits for no one, the answer least of all.
		s.store.SyncLater()
	}
}

// protect runs the job's work under ctx, turning a panic into an error so
// that the job still ends with its done.
func (s *Session) protect(j *job, ctx context.Context, emit func(wire.Event)) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &agent.Error{Code: wire.CodeInternal, Message: fmt.Sprintf("internal error: %v", v)}
		}
	}()
	return j.run(ctx, emit)
}

// emitterKey keys the running work's emitter in its context.
type emitterKey struct{}

// withEmitter returns the context the work runs under: ctx, carrying the
// function that delivers an event into the work.
func withEmitter(ctx context.Context, emit func(wire.Event)) context.Context {
	return context.WithValue(ctx, emitterKey{}, emit)
}

// emitInto delivers ev into the running work whose context ctx is (or
// derives from), as its next event: stamped with the session's next seq
// and the work's prompt_id, shown to the observers, handed to the work's
// sink. Code the work calls on its own goroutine (an interceptor, as the
// approval one) uses it to add events in their place. Without a work in
// ctx it does nothing.
func emitInto(ctx context.Context, ev wire.Event) {
	if emit, ok := ctx.Value(emitterKey{}).(func(wire.Event)); ok {
		emit(ev)
	}
}

// finish delivers a job's done and ends the job in one step under the
// lock. A caller that has seen the done finds the session idle (unless
// more work waits): the next prompt starts at once, Clear and SetModel are
// not busy. An abort answered at the same moment comes either before the
// done (and says aborted) or after it (and says not).
func (s *Session) finish(j *job) {
	j.cancel() // a sink waiting for room stops waiting: done must not block
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == j {
		s.current = nil
	}
	if i := slices.Index(s.dropped, j); i >= 0 {
		s.dropped = slices.Delete(s.dropped, i, i+1)
	}
	done := &wire.DoneEvent{}
	if j.tally != nil {
		s.emitMu.Lock()
		done.Result = j.tally.result()
		s.emitMu.Unlock()
	}
	s.deliver(j, done)
}

// endDropped ends a job that never ran, the way an aborted one ends.
func (s *Session) endDropped(j *job) {
	if j.tally != nil {
		j.tally.start = time.Now()
	}
	s.deliver(j, &wire.TurnEndEvent{Stop: wire.StopAborted, Error: j.dropped})
	s.finish(j)
}

// eventsSink returns the Sink and Ready of work whose events go to q.
func eventsSink(q *Subscription[wire.Event]) (Sink, func(context.Context)) {
	sink := func(_ context.Context, ev wire.Event) {
		put(q, ev)
		if _, last := ev.(*wire.DoneEvent); last {
			q.End()
		}
	}
	return sink, func(ctx context.Context) { _ = q.Wait(ctx) }
}

// deliver stamps an event and hands it to the observers, the
// subscriptions and the job's sink, in one step with every other stamping
// (see Emit). Before, outside every lock, the work waits for room in the
// subscriptions and its own output, as their policies say.
func (s *Session) deliver(j *job, ev wire.Event) {
	if _, last := ev.(*wire.DoneEvent); !last {
		if subs := s.subs.Load(); subs != nil {
			for _, o := range *subs {
				if o.sub != nil {
					_ = o.sub.Wait(j.ctx)
				}
			}
		}
		if j.ready != nil {
			j.ready(j.ctx)
		}
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if te, ok := ev.(*wire.TurnEndEvent); ok {
		s.settle(j, te)
	}
	if j.tally != nil {
		j.tally.see(ev)
	}
	switch ev.(type) {
	case *wire.UserMessageEvent, *wire.AssistantMessageEvent, *wire.TurnStartEvent:
		// A message was committed to the transcript (a turn_start
		// follows a round of tool results): it goes to the file before
		// anyone hears of it, so that a kill mid-turn loses none of it.
		// A failure is reported when the work ends, which saves again.
		_ = s.persist()
	}
	ev.SetSeq(s.seq.Add(1))
	ev.SetPromptID(j.id)
	s.observe(ev)
	j.sink(j.ctx, ev)
}

// settle keeps a turn_end true to the abort's answer. Once an abort told
// its caller the work is aborted, the work's last turn_end says aborted,
// even when the model had finished its answer an instant before (the
// answer stays in the transcript). The caller holds s.emitMu.
func (s *Session) settle(j *job, te *wire.TurnEndEvent) {
	switch te.Stop {
	case wire.StopToolUse:
		return
	case wire.StopEndTurn, wire.StopLength, wire.StopRefusal:
		if j.abortAnswered && !j.ended {
			te.Stop, te.Error, te.Reason = wire.StopAborted, "aborted", ""
		}
	}
	j.ended = true
	if te.Stop == wire.StopAborted {
		j.abortedEnd = true
	}
}

// observe shows ev to the observers and adds it to the subscriptions.
// The caller holds s.emitMu.
func (s *Session) observe(ev wire.Event) {
	if subs := s.subs.Load(); subs != nil {
		for _, o := range *subs {
			if o.sub != nil {
				put(o.sub, ev)
			} else {
				o.fn(ev)
			}
		}
	}
}

// Emit writes an event that belongs to no piece of work (an extension's
// notice, say): it is stamped with the session's next seq and no
// prompt_id, shown to the observers, added to the subscriptions and
// handed to send, in one step with the stamping of every other event, so
// events reach their readers in seq order. Nothing waits for room: past a
// subscription's bound the event is dropped if the schema marks its type
// droppable (wire.DroppableEvent), kept otherwise. send, when not nil,
// must not block for long (a door's Send that only queues).
func (s *Session) Emit(ev wire.Event, send func(wire.Event)) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	ev.SetSeq(s.seq.Add(1))
	s.observe(ev)
	if send != nil {
		send(ev)
	}
}

// Subscribe returns a subscription to every event of the session from now
// on, stamped, in seq order: those of every piece of work (the work waits
// for its room as opts.Policy says) and those given to Emit. The reader
// takes them with Next and leaves with Close. When the session closes
// the subscription ends: Next returns what waits, then io.EOF.
func (s *Session) Subscribe(opts SubscribeOptions) *Subscription[wire.Event] {
	q := NewSubscription[wire.Event](opts)
	q.onClose = func() { s.removeSubscription(q) }
	s.addSubscriber(subscriber{sub: q})
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		q.End()
	}
	return q
}

// Observe adds fn to the functions that see every event of the session,
// stamped, before it reaches the work's sink; fn is called on the
// goroutine that emits, with the session's locks held, and must neither
// block nor call back into the session: hand the event on to a queue of
// your own (or take a Subscription instead). It returns the function that
// stops the observing.
func (s *Session) Observe(fn func(wire.Event)) (stop func()) {
	key := s.addSubscriber(subscriber{fn: fn})
	return func() { s.removeSubscriber(key) }
}

// addSubscriber adds o to the subscribers and returns its key.
func (s *Session) addSubscriber(o subscriber) uint64 {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.subNext++
	o.key = s.subNext
	var list []subscriber
	if cur := s.subs.Load(); cur != nil {
		list = slices.Clone(*cur)
	}
	list = append(list, o)
	s.subs.Store(&list)
	return o.key
}

// removeSubscriber removes the subscriber of key, if it is there.
func (s *Session) removeSubscriber(key uint64) {
	s.dropSubscribers(func(o subscriber) bool { return o.key == key })
}

// removeSubscription removes subscription q, if it is there: its reader
// closed it, or it was disconnected.
func (s *Session) removeSubscription(q *Subscription[wire.Event]) {
	s.dropSubscribers(func(o subscriber) bool { return o.sub == q })
}

// dropSubscribers removes the subscribers gone says are gone.
func (s *Session) dropSubscribers(gone func(subscriber) bool) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	cur := s.subs.Load()
	if cur == nil || !slices.ContainsFunc(*cur, gone) {
		return
	}
	list := slices.DeleteFunc(slices.Clone(*cur), gone)
	s.subs.Store(&list)
}

// Abort cancels the running work, if any: it ends with turn_end{aborted}
// and done. With all, the queued work is dropped too, each piece ending
// the same way, in the order it was sent, after the running one. answer,
// when not nil, is called with the result before the work is cancelled
// and with the lock that orders the endings held, so whatever the caller
// writes there precedes every ending the abort causes; it must not block.
func (s *Session) Abort(all bool, answer func(wire.AbortResult)) wire.AbortResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Work whose done is already delivered is no longer current, and work
	// whose last turn_end is out has ended as it said: neither is aborted,
	// and the answer says so. The stamping lock makes that decision and the
	// stamping of a last turn_end one order.
	s.emitMu.Lock()
	aborted := s.current != nil && !s.current.ended
	if aborted {
		s.current.abortAnswered = true
	}
	var dropped []*job
	if all {
		dropped = s.queue
		s.queue = nil
	}
	res := wire.AbortResult{Aborted: aborted, Dropped: int64(len(dropped))}
	if answer != nil {
		answer(res)
	}
	s.emitMu.Unlock()
	if s.current != nil {
		// Cancelled even when it had ended its turn: what is left (an
		// automatic compaction) stops too.
		s.current.cancel()
	}
	s.dropLocked(dropped, "dropped from the queue by abort")
	return res
}

// dropLocked hands dropped jobs to the worker, which ends each (in send
// order) once the running job's done is delivered, so the endings of
// different jobs never interleave. The caller holds s.mu.
func (s *Session) dropLocked(jobs []*job, why string) {
	for _, j := range jobs {
		j.cancel()
		j.dropped = why
	}
	s.dropped = append(s.dropped, jobs...)
	slices.SortFunc(s.dropped, func(a, b *job) int { return a.n - b.n })
}

// Shutdown refuses new work from now on with the text why, aborts the
// running work and drops the queue; every piece still ends with its done.
// It does not wait (see Wait).
func (s *Session) Shutdown(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse == "" {
		s.refuse = why
	}
	if s.current != nil {
		s.current.cancel()
	}
	s.dropLocked(s.queue, why)
	s.queue = nil
}

// Wait blocks until no work runs, waits or is still to be ended, or ctx
// ends.
func (s *Session) Wait(ctx context.Context) error {
	s.mu.Lock()
	idle := s.idle
	working := s.working
	s.mu.Unlock()
	if !working {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close aborts the running work, drops the queue, waits until every piece
// has delivered its done, and closes the session file. Every later call
// fails with ErrClosed. It is safe to call more than once.
func (s *Session) Close() error {
	s.Shutdown("the session is closed")
	s.wg.Wait()
	s.dropAllClientTools()
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	s.host.forget(s)
	plugErr := s.closePlugins() // extensions.go
	if subs := s.subs.Load(); subs != nil {
		for _, o := range *subs {
			if o.sub != nil {
				o.sub.End()
			}
		}
	}
	spillErr := s.spills.Close()
	if s.store != nil {
		return errors.Join(s.store.Close(), spillErr, plugErr)
	}
	return errors.Join(spillErr, plugErr)
}

// Clear drops the transcript and resets the cumulative usage. It returns
// ErrBusy while work runs or waits.
func (s *Session) Clear() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idleLocked(); err != nil {
		return err
	}
	if err := s.agent.Clear(); err != nil {
		return err
	}
	if err := s.undo.store.Reset(); err != nil {
		return err
	}
	return s.persistAndSync()
}

// SetMessages replaces the transcript with msgs, in their wire form (as
// Messages returns them), and brings the session file up to date. It
// fails, changing nothing, when msgs is not a transcript every provider
// accepts (see agent.Validate), and with ErrBusy while work runs or waits.
// What the wire form lacks does not come back (see agent.FromWire). The
// cumulative usage is kept.
func (s *Session) SetMessages(msgs []wire.Message) error {
	conv, err := agent.FromWire(msgs)
	if err == nil {
		err = agent.Validate(conv)
	}
	if err != nil {
		return fmt.Errorf("zot: messages: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idleLocked(); err != nil {
		return err
	}
	if err := s.agent.SetTranscript(conv); err != nil {
		return err
	}
	return s.persistAndSync()
}

// SetModel switches to another model of the session's provider. Any id
// NewSession takes is accepted: the catalog is advisory, and a model it
// does not list gets its defaults (see models.Catalog.Resolve). It fails
// with an *UnknownModelError for an empty id, and with ErrBusy while work
// runs or waits.
func (s *Session) SetModel(id string) error {
	return s.SetModelReasoning(id, nil)
}

// SetModelReasoning is SetModel that also sets the reasoning level when
// level is not nil ("" for the model's default); the model must take the
// level, the current one when level is nil (a *ReasoningError says which
// it takes).
func (s *Session) SetModelReasoning(id string, level *string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idleLocked(); err != nil {
		return err
	}
	if id == "" {
		return &UnknownModelError{Provider: s.provider}
	}
	m := s.catalog.Resolve(s.provider, id)
	l := s.agent.Reasoning()
	if level != nil {
		l = *level
	}
	if err := m.TakesEffort(l); err != nil {
		return &ReasoningError{Err: err}
	}
	return s.agent.SetModelReasoning(m, l)
}

// Reasoning returns the session's reasoning level, "" for the model's
// default.
func (s *Session) Reasoning() string { return s.agent.Reasoning() }

// ReasoningError says a model does not take a reasoning level.
type ReasoningError struct{ Err error }

// Error returns the message of the ReasoningError.
func (e *ReasoningError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ReasoningError) Unwrap() error { return e.Err }

// ErrorCode returns invalid_params: the caller asked for a level the model
// does not take.
func (e *ReasoningError) ErrorCode() wire.ErrorCode { return wire.CodeInvalidParams }

// AnswerApproval answers the approval request id, which waits for the
// door's answer (see SessionConfig.AnswerApprovals): the tool call it
// holds goes on with ans. It fails with an error wrapping
// ErrNoApprovalRequest when no request of that id waits: it never
// existed, was already answered, timed out, or its work was aborted.
func (s *Session) AnswerApproval(id string, ans Approval) error {
	if !s.approval.byAnswer {
		return fmt.Errorf("%w: %q (this session asks for no answers)", ErrNoApprovalRequest, id)
	}
	return s.approval.answer(id, ans)
}

// EndApprovals says that the door can answer no more approval requests
// (its client closed its input, say): the waiting requests, and every
// later one, are rejected at once with why, and no later one is asked
// for. Work then runs to its end instead of waiting for answers.
func (s *Session) EndApprovals(why string) {
	if s.approval.byAnswer {
		s.approval.end(why)
	}
}

// idleLocked returns ErrClosed or ErrBusy when the session cannot be
// changed now. The caller holds s.mu.
func (s *Session) idleLocked() error {
	switch {
	case s.closed:
		return ErrClosed
	case s.busyLocked():
		return ErrBusy
	}
	return nil
}

// UnknownModelError is returned by SetModel when it is given no model id.
type UnknownModelError struct {
	Provider, Model string
}

// Error returns the message of the UnknownModelError.
func (e *UnknownModelError) Error() string {
	if e.Model == "" {
		return fmt.Sprintf("no model id given (get_models lists the models of provider %s)", e.Provider)
	}
	return fmt.Sprintf("unknown model %q for provider %s (get_models lists them)", e.Model, e.Provider)
}

// ErrorCode returns unknown_model.
func (e *UnknownModelError) ErrorCode() wire.ErrorCode { return wire.CodeUnknownModel }

// persistAndSync is persist, then a sync of the file in the background.
func (s *Session) persistAndSync() error {
	err := s.persist()
	if s.store != nil {
		s.store.SyncLater()
	}
	return err
}

// persist brings the session file, if any, up to date.
func (s *Session) persist() error {
	if s.store == nil {
		return nil
	}
	// Saved on the worker (or while none runs), done with the transcript
	// when it returns: no copy of the whole conversation per message.
	if err := s.store.SaveVersion(s.agent.TranscriptView()); err != nil {
		return fmt.Errorf("zot: saving the session: %w", err)
	}
	return nil
}

// State returns a snapshot of the session.
func (s *Session) State() wire.StateResult {
	s.mu.Lock()
	busy := s.busyLocked()
	queued := int64(len(s.queue))
	s.mu.Unlock()
	sb := s.Sandbox()
	return wire.StateResult{
		Provider:     s.provider,
		Model:        s.agent.Model().ID,
		Reasoning:    wire.ReasoningLevel(s.agent.Reasoning()),
		CWD:          s.cwd,
		MessageCount: int64(s.agent.MessageCount()),
		Busy:         busy,
		Queued:       &queued,
		Usage:        s.agent.Usage(),
		Mode:         s.Mode(),
		McpServers:   s.plug.mcpCount(),
		Sandbox:      &sb,
	}
}

// Messages returns the transcript in its wire form, oldest first.
func (s *Session) Messages() []wire.Message { return s.agent.Messages() }

// Transcript returns a copy of the transcript, oldest first, whose
// blocks are shared with the session and must not be modified: a door
// that goes through a long transcript converts one message at a time
// (agent.WireMessage) instead of holding all of it in its wire form.
func (s *Session) Transcript() []llm.Message { return s.agent.Transcript() }

// MessageCount returns the number of messages in the transcript.
func (s *Session) MessageCount() int { return s.agent.MessageCount() }

// Approves reports whether a call of tool goes through the session's
// approval (ApprovalTools, ApproveOtherTools).
func (s *Session) Approves(tool string) bool {
	return s.approval.covers(tool)
}

// Usage returns the cumulative usage and cost since the start or the last
// Clear.
func (s *Session) Usage() wire.Usage { return s.agent.Usage() }

// Provider returns the provider id.
func (s *Session) Provider() string { return s.provider }

// Model returns the current model id.
func (s *Session) Model() string { return s.agent.Model().ID }

// CWD returns the absolute working directory of the tools.
func (s *Session) CWD() string { return s.cwd }

// Models returns the catalog's models of the session's provider, sorted
// by id, with the current model among them also when the catalog does not
// list it.
func (s *Session) Models() []wire.ModelInfo {
	list := catalogModels(s.catalog, s.provider)
	cur := s.agent.Model()
	i, found := slices.BinarySearchFunc(list, cur.ID, func(m wire.ModelInfo, id string) int { return strings.Compare(m.ID, id) })
	if !found {
		cur.Provider = s.provider
		list = slices.Insert(list, i, modelInfo(cur))
	}
	return list
}

// Tools returns the session's tool set: other tool sources (extensions,
// MCP servers) add theirs to it.
func (s *Session) Tools() *agent.ToolSet { return s.agent.Tools() }

// Interceptors returns the session's interceptor chain.
func (s *Session) Interceptors() *agent.Chain { return s.agent.Interceptors() }

// toolConflict reports a tool left out because its name was taken.
func (s *Session) toolConflict(name, kept, dropped string) {
	if s.log != nil {
		fmt.Fprintf(s.log, "zot: tool %q of %s is left out: %s already offers one of that name\n", name, dropped, kept)
	}
}

// errorEvent turns a run's error into its wire form: its code is
// wire.CodeOf's, as every door's answers are; its message the agent's
// own when the agent reported it.
func errorEvent(err error) *wire.ErrorEvent {
	msg := err.Error()
	var ae *agent.Error
	if errors.As(err, &ae) {
		msg = ae.Error()
	}
	return &wire.ErrorEvent{Message: msg, Code: wire.CodeOf(err)}
}
