package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Activities are what a worker runs: model calls with its provider, tool
// calls in the working directories it holds.
type Activities struct {
	// Provider makes the model calls; ProviderName is its id.
	Provider     llm.Provider
	ProviderName string
	// Catalog resolves a turn's model; nil means the built-in one.
	Catalog *models.Catalog
	// Blobs is the fleet's blob store.
	Blobs fleet.Blobs
	// Tools returns the tools of a working directory, confined by sb;
	// nil means the built-in ones.
	Tools func(cwd string, sb tools.Sandbox) []tools.Tool
	// Floor is the least confinement of every tool call this worker
	// runs (its --sandbox): a turn's own sandbox applies within it
	// (sandbox.Policy.Meet). Its workspace is each call's working
	// directory; the zero value confines nothing.
	Floor sandbox.Policy
	// HTTP posts events to the relays; nil means a client of its own.
	HTTP *http.Client
	// MCP runs the MCP servers of the tools the turns call here; nil
	// leaves their calls to the daemons.
	MCP *MCPServers
	// Heartbeat is how often a running activity tells the cluster it is
	// alive (and hears of an abort); 0 means a second.
	Heartbeat time.Duration

	secrets sync.Map // a secret's reference → the secret
}

func (w *Activities) client() *http.Client {
	if w.HTTP != nil {
		return w.HTTP
	}
	return http.DefaultClient
}

// to returns the client of the requests to t's client (its relay,
// intercepts, gates and calls): each carries the secret t names. One
// whose secret cannot be read fails its requests, saying why.
func (w *Activities) to(ctx context.Context, t TurnInfo) *http.Client {
	base := w.client()
	if t.Secret == "" {
		return base
	}
	c := *base
	tr := withSecret{base: c.Transport}
	if tr.base == nil {
		tr.base = http.DefaultTransport
	}
	if v, ok := w.secrets.Load(t.Secret); ok {
		tr.secret = v.(string)
	} else if data, err := w.Blobs.Get(ctx, t.Secret); err != nil {
		tr.err = fmt.Errorf("reading the turn's client's secret: %w", err)
	} else {
		tr.secret = string(data)
		w.secrets.Store(t.Secret, tr.secret)
	}
	c.Transport = tr
	return &c
}

// withSecret sends each request with the secret of the client it goes
// to.
type withSecret struct {
	base   http.RoundTripper
	secret string
	err    error
}

func (s withSecret) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, s.err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+s.secret)
	return s.base.RoundTrip(req)
}

// beat records heartbeats until the returned function is called.
func (w *Activities) beat(ctx context.Context) func() { return heartbeat(ctx, w.Heartbeat) }

// heartbeat records the activity's heartbeats every so often (0: a
// second) until the returned function is called.
func heartbeat(ctx context.Context, every time.Duration) func() {
	if every <= 0 {
		every = time.Second
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(stop); <-done }
}

// newAgent returns an agent that makes the turn's model calls, offering
// what the turn offers, its tools described but never run here.
func (w *Activities) newAgent(ctx context.Context, t TurnInfo, run []tools.Tool, chain *agent.Chain) (*agent.Agent, error) {
	a, _, err := w.newAgentOffer(ctx, t, run, chain)
	return a, err
}

// newAgentOffer is newAgent, with the turn's offer, which the agent
// offers until it is told another (stepOffer.set).
func (w *Activities) newAgentOffer(ctx context.Context, t TurnInfo, run []tools.Tool, chain *agent.Chain) (*agent.Agent, *stepOffer, error) {
	cat := w.Catalog
	if cat == nil {
		cat = models.Builtin()
	}
	model := cat.Resolve(w.ProviderName, t.Model)
	so := &stepOffer{}
	toolList := run
	if t.Offer != "" {
		data, err := w.Blobs.Get(ctx, t.Offer)
		if err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(data, &so.offer); err != nil {
			return nil, nil, fmt.Errorf("the turn's offer: %w", err)
		}
		if run == nil {
			toolList = describedTools(&so.offer)
		} else {
			// The offer's other tools, described: a call of a tool the
			// step did not offer is answered naming the step's tools, as
			// in process.
			toolList = slices.Clone(run)
			for _, d := range describedTools(&so.offer) {
				if !slices.ContainsFunc(run, func(t tools.Tool) bool { return t.Name() == d.Name() }) {
					toolList = append(toolList, d)
				}
			}
		}
	}
	a, err := agent.New(agent.Config{
		Provider:       w.Provider,
		Model:          model,
		Tools:          toolList,
		System:         so.system,
		Reasoning:      t.Reasoning,
		Interceptors:   chain,
		AutoCompactOff: true,
	})
	so.a = a
	return a, so, err
}

// stepOffer is what a step's agent offers.
type stepOffer struct {
	a     *agent.Agent
	mu    sync.Mutex
	offer Offer
}

func (s *stepOffer) system() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offer.System
}

func (s *stepOffer) get() *Offer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &s.offer
}

// set makes the agent offer o (described tools) from its next model
// call on.
func (s *stepOffer) set(o Offer) {
	s.mu.Lock()
	s.offer = o
	s.mu.Unlock()
	s.a.Tools().Set(agent.BuiltinSource, describedTools(&o))
}

// describedTools are the tools of o, described.
func describedTools(o *Offer) []tools.Tool {
	var list []tools.Tool
	for _, s := range o.Tools {
		list = append(list, described{spec: s, concurrent: slices.Contains(o.Concurrent, s.Name)})
	}
	return list
}

// described is a tool the model is told of, which runs elsewhere.
type described struct {
	spec       llm.ToolSpec
	concurrent bool
}

func (d described) Name() string            { return d.spec.Name }
func (d described) Concurrent() bool        { return d.concurrent }
func (d described) Description() string     { return d.spec.Description }
func (d described) Schema() json.RawMessage { return d.spec.Schema }
func (d described) Run(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{}, errors.New("this worker describes the tool; it runs on the worker holding the working directory")
}

// Step makes one model call of a turn. An attempt after one that
// finished (whose report the cluster never got) returns what that one
// recorded: a finished model call is not paid twice.
func (w *Activities) Step(ctx context.Context, in StepInput) (StepOutput, error) {
	defer w.beat(ctx)()
	mark := fmt.Sprintf("%s.%d", in.Turn.ID, in.Seq)
	var done StepOutput
	if ok, err := w.recall(ctx, mark, &done); err != nil || ok {
		return done, err
	}
	if in.Turn.Provider != "" && w.ProviderName != "" && in.Turn.Provider != w.ProviderName {
		// Answering with another provider's model is not the turn the
		// session asked for; another worker of the queue may serve it.
		return StepOutput{}, fmt.Errorf("this worker calls %s models; the turn asks for %s's %s: serve the turn's task queue with workers of its provider (--provider %s)", w.ProviderName, in.Turn.Provider, in.Turn.Model, in.Turn.Provider)
	}
	msgs, err := w.transcript(ctx, in.Transcript, in.Results)
	if err != nil {
		return StepOutput{}, err
	}
	// Another attempt is another answer (a real model's differs): its
	// events pass from its start (relay.go).
	em := newEmitter(w.to(ctx, in.Turn), in.Turn.Relay, in.Turn.ID, in.Seq, activity.GetInfo(ctx).Attempt)
	var chain *agent.Chain
	var newOffer string // the reference of the offer the session gave the step
	var offer *stepOffer
	if in.Turn.Gate != "" {
		// The session's BeforeTurn interceptors decide, in the daemon, as
		// they would before an in-process step's model call, and the step
		// offers the session's tools as they stand then.
		chain = new(agent.Chain)
		chain.Add(agent.Interceptor{
			Name:    "session",
			Timeout: -1, // the session's interceptors bound their own
			BeforeTurn: func(ctx context.Context, step int) agent.Verdict {
				em.flush() // the step's turn_start reaches the session first
				v, ref, o := w.gate(ctx, in.Turn, step)
				if o != nil {
					newOffer = ref
					offer.set(*o)
				}
				return v
			},
		})
	}
	a, offer, err := w.newAgentOffer(ctx, in.Turn, nil, chain)
	if err != nil {
		em.close()
		return StepOutput{}, err
	}
	if err := a.SetTranscript(msgs); err != nil {
		em.close()
		return StepOutput{}, fmt.Errorf("the turn's transcript: %w", err)
	}
	a.SetMeter(in.Meter)
	d, calls, stepErr := a.RunStep(ctx, in.UserIndex, in.Step, in.MaxSteps, em.emit)
	out := StepOutput{Action: d.Action, Meter: a.Meter(), Offer: newOffer}
	em.closeAlongside(func() {
		out.Transcript, err = w.putTranscript(context.WithoutCancel(ctx), a.Transcript())
	})
	if err != nil {
		return StepOutput{}, err
	}
	switch {
	case stepErr == nil:
	case agent.IsAborted(stepErr):
		out.Aborted = true
	default:
		var e *agent.Error
		if errors.As(stepErr, &e) {
			out.Code, out.Message = string(e.Code), e.Message
		} else {
			out.Code, out.Message = string(wire.CodeInternal), stepErr.Error()
		}
	}
	view := a.Tools().View()
	o := offer.get()
	for _, c := range calls {
		call := Call{ID: c.ID, Name: c.Name, Args: c.Args, ArgsError: c.ArgsError, Cut: c.Cut, Daemon: slices.Contains(o.Daemon, c.Name), MCP: o.MCPTools[c.Name]}
		// An MCP server's call tries a worker first: it runs alone.
		if tool, ok := view.Lookup(c.Name); ok && c.ArgsError == "" && call.MCP == "" {
			call.Concurrent = tools.IsConcurrent(tool)
		}
		out.Calls = append(out.Calls, call)
	}
	if !out.Aborted {
		if err := w.remember(context.WithoutCancel(ctx), mark, out); err != nil {
			return StepOutput{}, err
		}
	}
	if endsTurn(out) {
		// Recorded, this end is the turn's: an attempt made again returns
		// it, and the workflow ends with it.
		em.end(TurnOutput{Transcript: out.Transcript, Meter: out.Meter}, workflowID(ctx))
	}
	return out, nil
}

// workflowID is the id of the workflow of the activity of ctx.
func workflowID(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	return activity.GetInfo(ctx).WorkflowExecution.ID
}

// recall reads what the attempt named mark recorded into v.
func (w *Activities) recall(ctx context.Context, mark string, v any) (bool, error) {
	data, err := w.Blobs.Recorded(ctx, mark)
	if err != nil || data == nil {
		return false, err
	}
	return true, json.Unmarshal(data, v)
}

// remember records v as the result of the attempt named mark.
func (w *Activities) remember(ctx context.Context, mark string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.Blobs.Record(ctx, mark, data)
}

// Tool runs one tool call in the turn's working directory, and records
// its result as Step does. A later attempt never runs the call: it
// returns the recorded result when the first attempt finished (its
// report was lost), else answers the call as interrupted, since the
// worker that ran it went away partway. A call of a tool living in the
// daemon is handed to the daemon (inDaemon), whichever attempt asks; an
// MCP server's runs here with a server of the session's configuration,
// or is answered Fallback when none starts here.
func (w *Activities) Tool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	defer w.beat(ctx)()
	mark := fmt.Sprintf("%s.%d", in.Turn.ID, in.Seq)
	var done ToolOutput
	if ok, err := w.recall(ctx, mark, &done); err != nil || ok {
		return done, err
	}
	attempt := activity.GetInfo(ctx).Attempt
	if in.Call.Daemon && in.Call.MCP == "" {
		// The daemon runs the call once, whichever worker asks.
		return w.inDaemon(ctx, in, mark, attempt)
	}
	if attempt > 1 {
		return w.answer(ctx, in, attempt, InterruptedText, true)
	}
	floor := w.floor(in.Turn.CWD)
	guard := sandbox.NewGuard(turnPolicy(in.Turn.Sandbox, in.Turn.CWD).Meet(floor))
	run := w.toolsOf(in.Turn.CWD, guard)
	if in.Call.MCP != "" {
		t, release, why := w.mcpTool(ctx, in.Turn, in.Call)
		if t == nil {
			// The server does not run here: the daemon's answers.
			out := ToolOutput{Fallback: why}
			return out, w.remember(context.WithoutCancel(ctx), mark, out)
		}
		defer release()
		run = append(slices.Clone(run), t)
	}
	var chain *agent.Chain
	if in.Turn.Intercept != "" {
		chain = new(agent.Chain)
		chain.Add(agent.Interceptor{
			Name:       "session",
			Timeout:    -1, // a person may be answering an approval
			FailClosed: true,
			BeforeTool: func(ctx context.Context, call agent.ToolCall) agent.Verdict {
				var v agent.Verdict
				var sb *fleet.Sandbox
				var grant string
				if pre := in.Verdict; pre != nil {
					// Asked before the call, with the calls it runs beside.
					v, sb, grant = agent.Verdict{Block: pre.Block, Reason: pre.Reason, Args: pre.Args}, pre.Sandbox, pre.Grant
				} else {
					v, sb, grant = w.ask(ctx, in.Turn, call)
				}
				if sb != nil {
					guard.Set(sb.Policy(in.Turn.CWD).Meet(floor))
				}
				// A write the session allowed once outside its sandbox,
				// but never outside this worker's.
				if grant != "" && floor.CheckWrite(grant) == nil {
					guard.AllowOnce(grant)
				}
				return v
			},
		})
	}
	a, err := w.newAgent(ctx, in.Turn, run, chain)
	if err != nil {
		return ToolOutput{}, err
	}
	em := newEmitter(w.to(ctx, in.Turn), in.Turn.Relay, in.Turn.ID, in.Seq, attempt)
	res := a.RunCall(ctx, in.Call.block(), em.emit)
	var ref string
	em.closeAlongside(func() {
		ref, err = w.putResults(context.WithoutCancel(ctx), res)
	})
	if err != nil {
		return ToolOutput{}, err
	}
	out := ToolOutput{Result: ref}
	return out, w.remember(context.WithoutCancel(ctx), mark, out)
}

// mcpTool returns the tool of call c, which an MCP server of the turn
// offers, from a server of the session's configuration running on this
// worker in the turn's folder, or why there is none.
func (w *Activities) mcpTool(ctx context.Context, t TurnInfo, c Call) (tools.Tool, func(), string) {
	if w.MCP == nil {
		return nil, nil, "this worker runs no MCP servers"
	}
	var offer Offer
	data, err := w.Blobs.Get(ctx, t.Offer)
	if err == nil {
		err = json.Unmarshal(data, &offer)
	}
	if err != nil {
		return nil, nil, "the turn's offer: " + err.Error()
	}
	i := slices.IndexFunc(offer.MCPServers, func(s mcphost.Server) bool { return s.Name == c.MCP })
	if i < 0 {
		return nil, nil, fmt.Sprintf("the turn has no MCP server %q", c.MCP)
	}
	return w.MCP.Tool(ctx, t.CWD, offer.MCPServers[i], c.Name)
}

// answer answers call in with text (its tool_result emitted), without
// running it.
func (w *Activities) answer(ctx context.Context, in ToolInput, attempt int32, text string, interrupted bool) (ToolOutput, error) {
	em := newEmitter(w.to(ctx, in.Turn), in.Turn.Relay, in.Turn.ID, in.Seq, attempt)
	res := agent.AnswerCall(in.Call.block(), text, em.emit)
	em.close()
	ref, err := w.putResults(context.WithoutCancel(ctx), res)
	return ToolOutput{Result: ref, Interrupted: interrupted}, err
}

// inDaemon hands a call of a tool living in the daemon to the daemon
// holding the session, through its client (TurnInfo.Call), and returns
// its result. The daemon runs the call as in process and emits its
// events; the client knows the call by the turn and its place in it, so
// a worker asking again after another went away mid-call waits for the
// same run, never a second. A daemon that is gone answers the call as
// not run (it never reached it) or interrupted.
func (w *Activities) inDaemon(ctx context.Context, in ToolInput, mark string, attempt int32) (ToolOutput, error) {
	res, err := w.callDaemon(ctx, in)
	switch {
	case ctx.Err() != nil:
		return ToolOutput{}, ctx.Err()
	case err != nil && attempt == 1 && isDial(err):
		return w.answer(ctx, in, attempt, NotRunText+"the zot daemon holding the session is gone", false)
	case err != nil:
		return w.answer(ctx, in, attempt, DaemonGoneText, true)
	case res.NotRun != "":
		return w.answer(ctx, in, attempt, NotRunText+res.NotRun, false)
	case res.Gone:
		return w.answer(ctx, in, attempt, DaemonGoneText, true)
	}
	m, err := sessionfile.DecodeMessage(res.Output)
	if err != nil || len(m.Content) != 1 {
		return ToolOutput{}, fmt.Errorf("the daemon's result of call %s: not a tool message of one result (%v)", in.Call.ID, err)
	}
	if _, ok := m.Content[0].(*llm.ToolResultBlock); !ok {
		return ToolOutput{}, fmt.Errorf("the daemon's result of call %s is not a tool result", in.Call.ID)
	}
	ref, err := w.Blobs.Put(context.WithoutCancel(ctx), res.Output)
	if err != nil {
		return ToolOutput{}, err
	}
	out := ToolOutput{Result: ref}
	return out, w.remember(context.WithoutCancel(ctx), mark, out)
}

// DaemonCall is what a worker posts to a client's TurnInfo.Call: a call
// of turn, Key naming it in the turn (its activity's place).
type DaemonCall struct {
	Turn string         `json:"turn"`
	Key  int64          `json:"key"`
	Call fleet.ToolCall `json:"call"`
}

// DaemonResult is a client's answer to a DaemonCall: the call's result
// (a tool message of one result block, as a session file holds it), or
// why the daemon did not run it, or that it went away while it ran.
type DaemonResult struct {
	Output json.RawMessage `json:"output,omitempty"`
	NotRun string          `json:"not_run,omitempty"`
	Gone   bool            `json:"gone,omitempty"`
}

// callDaemon posts the call to the client and waits for its answer.
func (w *Activities) callDaemon(ctx context.Context, in ToolInput) (DaemonResult, error) {
	var res DaemonResult
	if in.Turn.Call == "" {
		return DaemonResult{NotRun: "the turn's client runs no tools of its daemon"}, nil
	}
	body, err := json.Marshal(DaemonCall{Turn: in.Turn.ID, Key: in.Seq, Call: fleet.ToolCall{ID: in.Call.ID, Name: in.Call.Name, Args: in.Call.Args, ArgsError: in.Call.ArgsError}})
	if err != nil {
		return res, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.Turn.Call, bytes.NewReader(body))
	if err != nil {
		return res, err
	}
	resp, err := w.to(ctx, in.Turn).Do(req)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return res, fmt.Errorf("the daemon's client answered %s", resp.Status)
	}
	return res, json.NewDecoder(resp.Body).Decode(&res)
}

// isDial reports whether err is a failure to connect: the request never
// left.
func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// floor is the worker's floor in the working directory cwd.
func (w *Activities) floor(cwd string) sandbox.Policy {
	f := w.Floor
	if f.Mode == "" {
		f.Mode, f.Network = sandbox.Off, true
	}
	f.Workspace = cwd
	return f
}

// turnPolicy is the sandbox a turn asks for in cwd; without one, none.
func turnPolicy(sb *fleet.Sandbox, cwd string) sandbox.Policy {
	if sb == nil {
		return sandbox.Policy{Mode: sandbox.Off, Network: true, Workspace: cwd}
	}
	return sb.Policy(cwd)
}

// ask shows call to the session's interceptors in the daemon and returns
// their verdict, with the session's sandbox as it stands and a path the
// session allowed the call to write once (fleet.ToolVerdict); one that
// cannot be asked blocks the call.
func (w *Activities) ask(ctx context.Context, t TurnInfo, call agent.ToolCall) (agent.Verdict, *fleet.Sandbox, string) {
	body, err := json.Marshal(struct {
		Turn string         `json:"turn"`
		Call fleet.ToolCall `json:"call"`
	}{t.ID, fleet.ToolCall{ID: call.ID, Name: call.Name, Args: call.Args}})
	if err != nil {
		return agent.Verdict{Err: err}, nil, ""
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Intercept, bytes.NewReader(body))
	if err != nil {
		return agent.Verdict{Err: err}, nil, ""
	}
	resp, err := w.to(ctx, t).Do(req)
	if err != nil {
		return agent.Verdict{Err: fmt.Errorf("asking the session's interceptors: %w", err)}, nil, ""
	}
	defer resp.Body.Close()
	var v fleet.ToolVerdict
	if resp.StatusCode != http.StatusOK {
		return agent.Verdict{Err: fmt.Errorf("asking the session's interceptors: %s", resp.Status)}, nil, ""
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return agent.Verdict{Err: fmt.Errorf("the session's verdict: %w", err)}, nil, ""
	}
	return agent.Verdict{Block: v.Block, Reason: v.Reason, Args: v.Args}, v.Sandbox, v.Grant
}

// Ask shows calls about to run side by side to the session's
// interceptors, one after another in order, and returns their verdicts.
func (w *Activities) Ask(ctx context.Context, in AskInput) (AskOutput, error) {
	defer w.beat(ctx)()
	var out AskOutput
	for _, c := range in.Calls {
		args := c.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		v, sb, grant := w.ask(ctx, in.Turn, agent.ToolCall{ID: c.ID, Name: c.Name, Args: args})
		if ctx.Err() != nil {
			return AskOutput{}, ctx.Err()
		}
		if v.Err != nil {
			v = agent.Verdict{Block: true, Reason: v.Err.Error()}
		}
		out.Verdicts = append(out.Verdicts, fleet.ToolVerdict{Block: v.Block, Reason: v.Reason, Args: v.Args, Sandbox: sb, Grant: grant})
	}
	return out, nil
}

// gate shows step, about to make its model call, to the session's
// BeforeTurn interceptors in the daemon and returns their verdict, with
// what the step offers (and its reference) when the session answered
// it. A session that cannot be asked (its daemon went away) lets the
// step go on with what it offered.
func (w *Activities) gate(ctx context.Context, t TurnInfo, step int) (agent.Verdict, string, *Offer) {
	body, err := json.Marshal(struct {
		Turn string `json:"turn"`
		Step int    `json:"step"`
	}{t.ID, step})
	if err != nil {
		return agent.Verdict{}, "", nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Gate, bytes.NewReader(body))
	if err != nil {
		return agent.Verdict{}, "", nil
	}
	resp, err := w.to(ctx, t).Do(req)
	if err != nil {
		return agent.Verdict{}, "", nil
	}
	defer resp.Body.Close()
	var v GateVerdict
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		return agent.Verdict{}, "", nil
	}
	out := agent.Verdict{Block: v.Block, Reason: v.Reason}
	if v.Offer == "" {
		return out, "", nil
	}
	data, err := w.Blobs.Get(ctx, v.Offer)
	var o Offer
	if err == nil {
		err = json.Unmarshal(data, &o)
	}
	if err != nil {
		return out, "", nil
	}
	return out, v.Offer, &o
}

// GateVerdict is what a client answers a gate with: the session's
// BeforeTurn verdict and the reference of what the step offers.
type GateVerdict struct {
	Block  bool   `json:"block,omitempty"`
	Reason string `json:"reason,omitempty"`
	Offer  string `json:"offer,omitempty"`
}

// Answer answers calls that did not run or did not finish.
func (w *Activities) Answer(ctx context.Context, in AnswerInput) (AnswerOutput, error) {
	// Every attempt answers the same: numbers passed are dropped.
	em := newEmitter(w.to(ctx, in.Turn), in.Turn.Relay, in.Turn.ID, in.Seq, 0)
	var out AnswerOutput
	for _, c := range in.Calls {
		ref, err := w.putResults(ctx, agent.AnswerCall(c.block(), in.Text, em.emit))
		if err != nil {
			em.close()
			return AnswerOutput{}, err
		}
		out.Results = append(out.Results, ref)
	}
	for _, raw := range in.Then {
		ev, err := wire.DecodeEvent(raw)
		if err != nil {
			em.close()
			return AnswerOutput{}, err
		}
		em.emit(ev)
	}
	em.close()
	return out, nil
}

func (w *Activities) toolsOf(cwd string, sb tools.Sandbox) []tools.Tool {
	if w.Tools != nil {
		return w.Tools(cwd, sb)
	}
	return tools.Builtins(tools.Config{CWD: cwd, Sandbox: sb})
}

// transcript reads the transcript of ref, with a tool message of the
// results of refs after it when there are any.
func (w *Activities) transcript(ctx context.Context, ref string, results []string) ([]llm.Message, error) {
	msgs, err := ReadTranscript(ctx, w.Blobs, ref)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return msgs, nil
	}
	rs, err := ReadResults(ctx, w.Blobs, results)
	if err != nil {
		return nil, err
	}
	return append(msgs, agent.ResultsMessage(rs)), nil
}

// ReadTranscript reads a transcript from the blob store.
func ReadTranscript(ctx context.Context, b fleet.Blobs, ref string) ([]llm.Message, error) {
	data, err := b.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	var msgs []llm.Message
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		m, err := sessionfile.DecodeMessage(line)
		if err != nil {
			return nil, fmt.Errorf("message %d of the transcript: %w", i, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// ReadResults reads tool results from the blob store.
func ReadResults(ctx context.Context, b fleet.Blobs, refs []string) ([]*llm.ToolResultBlock, error) {
	out := make([]*llm.ToolResultBlock, 0, len(refs))
	for _, ref := range refs {
		data, err := b.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		m, err := sessionfile.DecodeMessage(data)
		if err != nil {
			return nil, fmt.Errorf("a tool result: %w", err)
		}
		if len(m.Content) != 1 {
			return nil, errors.New("a tool result of more than one block")
		}
		r, ok := m.Content[0].(*llm.ToolResultBlock)
		if !ok {
			return nil, errors.New("a tool result that is not one")
		}
		out = append(out, r)
	}
	return out, nil
}

// PutTranscript stores a transcript in the blob store.
func PutTranscript(ctx context.Context, b fleet.Blobs, msgs []llm.Message) (string, error) {
	var buf bytes.Buffer
	for i, m := range msgs {
		line, err := sessionfile.EncodeMessage(m)
		if err != nil {
			return "", fmt.Errorf("message %d: %w", i, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return b.Put(ctx, buf.Bytes())
}

func (w *Activities) putTranscript(ctx context.Context, msgs []llm.Message) (string, error) {
	return PutTranscript(ctx, w.Blobs, msgs)
}

func (w *Activities) putResults(ctx context.Context, r *llm.ToolResultBlock) (string, error) {
	line, err := sessionfile.EncodeMessage(llm.Message{Role: llm.RoleTool, Content: []llm.Block{r}})
	if err != nil {
		return "", err
	}
	return w.Blobs.Put(ctx, line)
}
