package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/mcphost"
	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// Remote is an engine.Executor that runs each prompt as a durable turn
// of a fleet, through a zot-fleet client process it starts and owns: it
// sends the turn (the transcript, the model, the tools offered, the
// working directory), emits the turn's events as they come back (in
// order, each once, however often the workers running it were replaced),
// and leaves the agent holding the transcript and usage the turn ended
// with. A client that exits (killed, crashed) is started again: the
// prompts it was running wait for their turns' ends through the new one
// (the events in between are lost), and the next prompts go to it.
// Remote is safe for concurrent use by many sessions.
type Remote struct {
	path  string
	args  []string
	turns string // where each stored session's running turn is noted
	log   io.Writer
	wait  sync.WaitGroup // the clients' readers

	mu     sync.Mutex
	cur    *proc // the client the next prompt goes to
	closed bool
}

// proc is one run of the client program. The frames of a turn go to the
// run it was sent to, and only there: a request number of one run means
// nothing to the next.
type proc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	wmu  sync.Mutex // one frame at a time on in
	log  io.Writer
	done chan struct{} // closed when the reader has ended

	ready chan struct{} // closed at the client's ready frame

	mu      sync.Mutex
	pending map[string]chan Frame
	err     error // why the client is gone, once it is
}

// maxRestarts bounds how often a prompt waits for its turn through a
// client started again after the one it was sent through exited.
const maxRestarts = 3

// MaxSteps bounds each turn's model calls (agent.DefaultMaxSteps).
const MaxSteps = agent.DefaultMaxSteps

// Start starts the client program at path with args (zot-fleet client
// and its flags); what it writes on stderr goes to log. The id of each
// stored session's running turn is noted in a file under turns (until
// its end is kept), so that a zot started again after this one was
// killed finishes it (Resume); with turns "" nothing is noted.
func Start(path string, args []string, turns string, log io.Writer) (*Remote, error) {
	if turns != "" {
		if err := os.MkdirAll(turns, 0o700); err != nil {
			return nil, fmt.Errorf("fleet: %w", err)
		}
	}
	r := &Remote{path: path, args: args, turns: turns, log: log}
	p, err := r.spawn()
	if err != nil {
		return nil, err
	}
	r.cur = p
	return r, nil
}

// spawn starts a run of the client.
func (r *Remote) spawn() (*proc, error) {
	cmd := exec.Command(r.path, r.args...)
	cmd.Stderr = r.log
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("fleet: starting %s: %w", r.path, err)
	}
	p := &proc{cmd: cmd, in: in, log: r.log, done: make(chan struct{}), ready: make(chan struct{}), pending: make(map[string]chan Frame)}
	r.wait.Add(1)
	go func() {
		defer r.wait.Done()
		p.read(out)
	}()
	return p, nil
}

// client returns the client to send a turn to once it has reached the
// cluster, starting it again if it exited since the last turn.
func (r *Remote) client(ctx context.Context) (*proc, error) {
	r.mu.Lock()
	p := r.cur
	if gone := p.gone(); gone != nil && !r.closed {
		np, err := r.spawn()
		if err != nil {
			r.mu.Unlock()
			return nil, err
		}
		fmt.Fprintf(r.log, "zot: fleet: the fleet client had stopped (%v); started it again\n", gone)
		r.cur, p = np, np
	}
	r.mu.Unlock()
	if err := p.Ready(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// gone is why the client exited, nil while it runs.
func (p *proc) gone() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Ready waits until the client has reached the cluster, ctx ends or the
// client exits.
func (r *Remote) Ready(ctx context.Context) error {
	r.mu.Lock()
	p := r.cur
	r.mu.Unlock()
	return p.Ready(ctx)
}

// read dispatches the client's frames until it ends, then fails every
// turn still waiting.
func (p *proc) read(out io.Reader) {
	defer close(p.done)
	lines := ndjson.NewReader(out, 0)
	readyOnce := sync.Once{}
	var cause error
	said := "" // the client's last error of its own
	for {
		line, err := lines.Next()
		if err != nil {
			cause = err
			if !errors.Is(err, io.EOF) {
				// A frame too long to read (over ndjson's limit) or a
				// broken pipe: what follows cannot be trusted to belong
				// where it seems, and a client left running would keep
				// its turns waiting for ever. It is ended, and started
				// again for the next prompt.
				cause = fmt.Errorf("reading its frames: %w", err)
				_ = p.cmd.Process.Kill()
			}
			break
		}
		var f Frame
		if err := json.Unmarshal(line, &f); err != nil {
			fmt.Fprintf(p.log, "zot: fleet client: a line that is no frame: %v\n", err)
			continue
		}
		switch {
		case f.Type == FrameReady:
			readyOnce.Do(func() { close(p.ready) })
		case f.Turn == "":
			if f.Type == FrameError {
				fmt.Fprintf(p.log, "zot: fleet client: %s\n", f.Error)
				said = f.Error
			}
		default:
			p.mu.Lock()
			ch := p.pending[f.Turn]
			p.mu.Unlock()
			switch {
			case ch != nil:
				ch <- f
			case f.Type == FrameIntercept:
				p.refuse(f, "no turn of this zot is waiting for the call")
			case f.Type == FrameCall:
				p.decline(f, "no turn of this zot is waiting for the call")
			case f.Type == FrameGate:
				p.open(f)
			}
		}
	}
	eof := errors.Is(cause, io.EOF)
	if eof {
		cause = errors.New("the fleet client exited")
	}
	werr := p.cmd.Wait()
	if werr != nil && eof {
		cause = fmt.Errorf("the fleet client exited: %w", werr)
	}
	if said != "" {
		cause = fmt.Errorf("%s (%w)", said, cause)
	}
	p.mu.Lock()
	p.err = cause
	for id, ch := range p.pending {
		ch <- Frame{Type: FrameError, Turn: id, Error: cause.Error()}
	}
	p.mu.Unlock()
}

// send writes one frame to the client.
func (p *proc) send(f Frame) error {
	line, err := json.Marshal(f)
	if err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err = p.in.Write(append(line, '\n'))
	return err
}

// Ready waits until the client has reached the cluster, ctx ends or the
// client exits.
func (p *proc) Ready(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-p.done:
		return fmt.Errorf("fleet: %w", p.gone())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Prompt runs t as a turn of the fleet.
func (r *Remote) Prompt(ctx context.Context, t engine.ExecTurn, emit func(wire.Event)) error {
	a := t.Agent
	if t.Text == "" && len(t.Images) == 0 {
		return &agent.Error{Code: wire.CodeInvalidParams, Message: "empty prompt: give text or an image"}
	}
	msg, ev := a.UserMessage(t.Text, t.Images, t.Source)
	before := a.Transcript()
	emit(ev)
	// The session's gates run here, where its extensions and MCP servers
	// are: the turn offers the tools of those that became ready.
	if err := a.Gate(ctx, emit); err != nil {
		return err
	}
	turn, err := newTurn(ctx, t, append(before, msg))
	if err != nil {
		return &agent.Error{Code: wire.CodeInternal, Message: "fleet: " + err.Error()}
	}
	if parent := turnOf(ctx); parent != "" && t.ParentCall != "" {
		// A sub-agent's prompt, run under the task call of a turn of the
		// fleet: a child workflow of that turn.
		turn.Parent, turn.ParentCall = parent, t.ParentCall
	}
	// What the daemon runs for this turn (a tool of the session's) runs
	// under it: a sub-agent it starts is the turn's child.
	ctx = WithTurn(ctx, turn.ID)
	p, err := r.client(ctx)
	if err != nil {
		if ctx.Err() != nil {
			emit(&wire.TurnStartEvent{Step: 1})
			emit(&wire.TurnEndEvent{Stop: wire.StopAborted, Error: llm.ErrorText(context.Cause(ctx))})
			return ctx.Err()
		}
		return &agent.Error{Code: wire.CodeProviderError, Message: err.Error()}
	}
	ch, err := p.register(turn.ID)
	if err != nil {
		return &agent.Error{Code: wire.CodeProviderError, Message: err.Error()}
	}
	defer func() { p.unregister(turn.ID) }() // the client waited on last
	if turn.Parent == "" {
		// A sub-agent's turn is not resumed: its task call is the
		// parent's, which is.
		if err := r.note(t.Session, turn.ID); err != nil {
			return &agent.Error{Code: wire.CodeInternal, Message: err.Error()}
		}
	}
	if err := p.send(Frame{Type: FrameSubmit, Turn: turn.ID, Input: turn}); err != nil {
		return &agent.Error{Code: wire.CodeProviderError, Message: "fleet: sending the turn: " + err.Error()}
	}
	// The calls of tools living here run each on a goroutine of its own:
	// those the workers send together (sub-agents) run side by side, as in
	// process, and an abort reaches the workflow while they run. The turn's
	// events are emitted one at a time.
	var emitMu sync.Mutex
	emitOne := emit
	emit = func(ev wire.Event) {
		emitMu.Lock()
		defer emitMu.Unlock()
		emitOne(ev)
	}
	var calls sync.WaitGroup
	defer calls.Wait()
	abort := ctx.Done()
	restarts := 0
	for {
		select {
		case <-abort:
			abort = nil // asked once; the turn's end still comes
			if err := p.send(Frame{Type: FrameAbort, Turn: turn.ID}); err != nil {
				fmt.Fprintf(r.log, "zot: fleet: aborting turn %s: %v\n", turn.ID, err)
			}
		case f := <-ch:
			switch f.Type {
			case FrameEvent:
				ev, err := wire.DecodeEvent(f.Event)
				if err != nil {
					fmt.Fprintf(r.log, "zot: fleet: turn %s: an event that does not decode: %v\n", turn.ID, err)
					continue
				}
				emit(ev)
			case FrameIntercept:
				p.intercept(ctx, t, f)
			case FrameCall:
				calls.Add(1)
				go func() {
					defer calls.Done()
					p.call(ctx, a, f, emit)
				}()
			case FrameGate:
				p.gate(ctx, t, f)
			case FrameError:
				gone := p.gone()
				if gone == nil || restarts == maxRestarts || ctx.Err() != nil {
					return &agent.Error{Code: wire.CodeProviderError, Message: "fleet: " + f.Error}
				}
				// The client exited, not the turn, which goes on in the
				// fleet: a client started again waits for its end (the
				// events meanwhile are lost, and a call the workers ask
				// about meanwhile is blocked, as after a daemon's restart).
				restarts++
				fmt.Fprintf(r.log, "zot: fleet: turn %s: %v; waiting for its end through the client started again\n", turn.ID, gone)
				np, err := r.client(ctx)
				if err == nil {
					ch, err = np.register(turn.ID)
				}
				if err == nil {
					p.unregister(turn.ID)
					p = np
					err = p.send(Frame{Type: FrameAwait, Turn: turn.ID})
				}
				if err != nil {
					return &agent.Error{Code: wire.CodeProviderError, Message: fmt.Sprintf("fleet: %s; the turn goes on in the fleet, but waiting for its end failed: %v", f.Error, err)}
				}
			case FrameDone:
				calls.Wait() // none runs: the turn waited for their results
				if err := r.keep(a, f.Result); err != nil {
					return err
				}
				if restarts > 0 {
					missed(a, f.Result, emit)
				}
				r.unnote(t.Session)
				return r.outcome(ctx, f.Result)
			}
		}
	}
}

// turnKey keys, in a context, the id of the fleet's turn it runs under.
type turnKey struct{}

// WithTurn returns ctx under the fleet's turn id: what runs in the daemon
// for that turn (a tool call answered through the daemon, the task tool's
// sub-agent) runs under it, and a sub-agent's turn started under it is
// that turn's child workflow.
func WithTurn(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, turnKey{}, id)
}

// turnOf returns the id of the turn ctx runs under, "" outside one.
func turnOf(ctx context.Context) string {
	id, _ := ctx.Value(turnKey{}).(string)
	return id
}

// intercept runs the session's interceptors on a tool call a worker is
// about to run, on the turn's own goroutine (an approval's question is
// one of the turn's events), and answers the worker: with the verdict,
// the session's sandbox as it stands and, for a write the approval
// allowed outside it once, that grant (used up here, as the call that
// writes would use it up in process).
func (p *proc) intercept(ctx context.Context, t engine.ExecTurn, f Frame) {
	v := agent.Verdict{Block: true, Reason: "the call came without its description"}
	if f.Call != nil {
		v = t.Agent.Interceptors().BeforeTool(ctx, agent.ToolCall{ID: f.Call.ID, Name: f.Call.Name, Args: f.Call.Args})
		if ctx.Err() != nil {
			v = agent.Verdict{Block: true, Reason: "aborted"}
		}
	}
	out := &ToolVerdict{Block: v.Block, Reason: v.Reason, Args: v.Args}
	if !v.Block && t.Sandbox != nil {
		out.Sandbox = SandboxOf(t.Sandbox.Policy())
		args := f.Call.Args
		if v.Args != nil {
			args = v.Args
		}
		out.Grant = grantOf(t.Sandbox, t.CWD, f.Call.Name, args)
	}
	if err := p.send(Frame{Type: FrameVerdict, Turn: f.Turn, Request: f.Request, Verdict: out}); err != nil {
		fmt.Fprintf(p.log, "zot: fleet: answering an intercept: %v\n", err)
	}
}

// grantOf takes from g the permission to write once that the session's
// approval gave a write or edit call outside the sandbox, and returns the
// real path it was given for ("" for none).
func grantOf(g *sandbox.Guard, cwd, tool string, args json.RawMessage) string {
	if tool != "write" && tool != "edit" {
		return ""
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return ""
	}
	grant, _ := g.CheckWrite(tools.ResolvePath(cwd, a.Path))
	return grant
}

// call runs a call of one of the turn's Daemon tools on the session's
// agent, as the in-process loop runs it (its interceptors and approval,
// its tool, through the tool middleware): its events are emitted among
// the turn's, in their place, since the workers go on with the turn only
// once it is answered (those of calls sent together, which run side by
// side, interleave as in process). An abort ends
// it through ctx (the workflow leaves the call to the daemon), and its
// result says so.
func (p *proc) call(ctx context.Context, a *agent.Agent, f Frame, emit func(wire.Event)) {
	if f.Call == nil {
		p.decline(f, "the call came without its description")
		return
	}
	c := &llm.ToolCallBlock{ID: f.Call.ID, Name: f.Call.Name, Args: f.Call.Args, ArgsError: f.Call.ArgsError}
	res := a.RunCall(ctx, c, emit)
	line, err := sessionfile.EncodeMessage(llm.Message{Role: llm.RoleTool, Content: []llm.Block{res}})
	if err != nil {
		p.decline(f, "encoding the call's result: "+err.Error())
		return
	}
	if err := p.send(Frame{Type: FrameResult, Turn: f.Turn, Request: f.Request, Output: line}); err != nil {
		fmt.Fprintf(p.log, "zot: fleet: answering a call: %v\n", err)
	}
}

// gate runs the session's BeforeTurn interceptors for a step a worker
// is about to make (its MCP servers being ready, its extensions'
// turn_start intercepts), on the turn's goroutine, and answers with
// their verdict and what the step offers once they have run (for a model
// that binds its thinking to the tools, only at the first step). An abort
// is left to the turn's own (the step ends aborted), not answered as a
// block.
func (p *proc) gate(ctx context.Context, t engine.ExecTurn, f Frame) {
	v := t.Agent.Interceptors().BeforeTurn(ctx, f.Step)
	out := &ToolVerdict{}
	if f.Step <= 1 || !t.Agent.Model().BoundThinking {
		// A model that binds its thinking to the tools is offered the
		// first step's at every step, as in process.
		out.Offer = offerOf(ctx, t)
	}
	if ctx.Err() == nil && v.Block {
		out.Block, out.Reason = true, v.Reason
	}
	if err := p.send(Frame{Type: FrameVerdict, Turn: f.Turn, Request: f.Request, Verdict: out}); err != nil {
		fmt.Fprintf(p.log, "zot: fleet: answering a gate: %v\n", err)
	}
}

// open lets a step through that no turn of this zot waits for (one a
// zot that went away started): the turn goes on as it was offered.
func (p *proc) open(f Frame) {
	if err := p.send(Frame{Type: FrameVerdict, Turn: f.Turn, Request: f.Request, Verdict: &ToolVerdict{}}); err != nil {
		fmt.Fprintf(p.log, "zot: fleet: answering a gate: %v\n", err)
	}
}

// decline answers a call that was not run, saying why.
func (p *proc) decline(f Frame, reason string) {
	if err := p.send(Frame{Type: FrameResult, Turn: f.Turn, Request: f.Request, Error: reason}); err != nil {
		fmt.Fprintf(p.log, "zot: fleet: answering a call: %v\n", err)
	}
}

// refuse answers an intercept with a block.
func (p *proc) refuse(f Frame, reason string) {
	if err := p.send(Frame{Type: FrameVerdict, Turn: f.Turn, Request: f.Request, Verdict: &ToolVerdict{Block: true, Reason: reason}}); err != nil {
		fmt.Fprintf(p.log, "zot: fleet: answering an intercept: %v\n", err)
	}
}

// register makes the channel turn id's frames come on.
func (p *proc) register(id string) (chan Frame, error) {
	ch := make(chan Frame, 4096)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, fmt.Errorf("fleet: %w", p.err)
	}
	p.pending[id] = ch
	return ch, nil
}

func (p *proc) unregister(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// note keeps the id of session's running turn until its end is kept.
func (r *Remote) note(session, id string) error {
	if session == "" || r.turns == "" {
		return nil
	}
	if err := os.WriteFile(filepath.Join(r.turns, session), []byte(id), 0o600); err != nil {
		return fmt.Errorf("fleet: noting the turn: %w", err)
	}
	return nil
}

func (r *Remote) unnote(session string) {
	if session != "" && r.turns != "" {
		_ = os.Remove(filepath.Join(r.turns, session))
	}
}

// Resume finishes the turn of t's session that an earlier zot sent out
// and never saw end: the turn's later calls are shown to the session's
// interceptors here and those of the daemon's tools run here, and the
// turn's end in the fleet is left with the agent (engine.Resumer).
func (r *Remote) Resume(ctx context.Context, t engine.ExecTurn) error {
	if t.Session == "" || r.turns == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.turns, t.Session))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	id := string(b)
	p, err := r.client(ctx)
	if err != nil {
		return err
	}
	ch, err := p.register(id)
	if err != nil {
		return err
	}
	defer p.unregister(id)
	ctx = WithTurn(ctx, id)
	// The client points the turn's later calls here: they pass the
	// session's interceptors, and those of its tools run here, as in a
	// prompt (their events reach no client: none holds the session yet).
	var calls sync.WaitGroup
	defer calls.Wait()
	if err := p.send(Frame{Type: FrameAwait, Turn: id}); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case f := <-ch:
			switch f.Type {
			case FrameIntercept:
				p.intercept(ctx, t, f)
			case FrameCall:
				calls.Add(1)
				go func() {
					defer calls.Done()
					p.call(ctx, t.Agent, f, func(wire.Event) {})
				}()
			case FrameGate:
				p.open(f)
			case FrameError:
				return fmt.Errorf("fleet: turn %s: %s", id, f.Error)
			case FrameDone:
				calls.Wait() // none runs: the turn waited for their results
				if err := r.keep(t.Agent, f.Result); err != nil {
					return err
				}
				r.unnote(t.Session)
				return nil
			}
		}
	}
}

// keep leaves the agent holding the turn's end.
func (r *Remote) keep(a *agent.Agent, res *TurnResult) error {
	if res == nil {
		return &agent.Error{Code: wire.CodeInternal, Message: "fleet: a turn ended without its result"}
	}
	msgs := make([]llm.Message, 0, len(res.Transcript))
	for i, line := range res.Transcript {
		m, err := sessionfile.DecodeMessage(line)
		if err != nil {
			return &agent.Error{Code: wire.CodeInternal, Message: fmt.Sprintf("fleet: message %d of the turn's transcript: %v", i, err)}
		}
		msgs = append(msgs, m)
	}
	if err := a.SetTranscript(msgs); err != nil {
		return &agent.Error{Code: wire.CodeInternal, Message: "fleet: " + err.Error()}
	}
	a.SetMeter(res.Meter)
	return nil
}

// missed emits the end of a turn whose events stopped coming when its
// client exited (those in between are lost): its last answer and, for
// a turn that ended well, its turn_end.
func missed(a *agent.Agent, res *TurnResult, emit func(wire.Event)) {
	if res.Aborted || res.Code != "" {
		return // the prompt's error says how it ended
	}
	msgs := a.Transcript()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			m := agent.WireMessage(&msgs[i])
			emit(&wire.AssistantMessageEvent{Content: m.Content, Time: m.Time})
			break
		}
	}
	emit(&wire.TurnEndEvent{Stop: wire.StopEndTurn})
}

// outcome is the error of a turn that ended with res.
func (r *Remote) outcome(ctx context.Context, res *TurnResult) error {
	switch {
	case res.Aborted:
		if err := ctx.Err(); err != nil {
			return err
		}
		return context.Canceled
	case res.Code != "":
		return &agent.Error{Code: wire.ErrorCode(res.Code), Message: res.Message}
	}
	return nil
}

// builtin names zot's built-in tools, which a worker runs.
var builtin = map[string]bool{"read": true, "write": true, "edit": true, "bash": true, "grep": true, "find": true, "ls": true}

// onWorker reports whether the call of the tool name of view, made under
// ctx, runs on a worker: zot's own built-in tools do, unless the
// session's client serves them (an ACP client's fs/* and terminal/*).
func onWorker(ctx context.Context, view *agent.ToolView, name string) bool {
	if !builtin[name] || view.Source(name) != agent.BuiltinSource {
		return false
	}
	t, ok := view.Lookup(name)
	return ok && !tools.AtClient(ctx, t)
}

// mcpServer returns the server of list that offers the tools of source
// (a tool set's source: "mcp:<server>").
func mcpServer(list []mcphost.Server, source string) (mcphost.Server, bool) {
	name, ok := strings.CutPrefix(source, "mcp:")
	if !ok {
		return mcphost.Server{}, false
	}
	i := slices.IndexFunc(list, func(s mcphost.Server) bool { return s.Name == name })
	if i < 0 {
		return mcphost.Server{}, false
	}
	return list[i], true
}

// offerOf is what t's next step offers the model, as the session's
// tools stand; ctx is the prompt's (what the session's client serves
// itself).
func offerOf(ctx context.Context, t engine.ExecTurn) *Offer {
	system, offered := t.Agent.Offer()
	// A worker runs zot's built-in tools; the session's other tools (an
	// extension's, an MCP server's, a client's, the task tool) are offered
	// too and run here, in the daemon, when called: one at a time, except
	// consecutive calls of a tool that may run side by side (the task
	// tool: sub-agents start together, as in process). The task tool's
	// sub-agent runs its own turn on the fleet, as a child of this one
	// (WithTurn).
	view := t.Agent.Tools().View()
	var specs []llm.ToolSpec
	var daemon, concurrent []string
	var mcpTools map[string]string
	var servers []mcphost.Server
	for _, spec := range offered {
		specs = append(specs, spec)
		if !onWorker(ctx, view, spec.Name) {
			daemon = append(daemon, spec.Name)
			if srv, ok := mcpServer(t.MCP, view.Source(spec.Name)); ok {
				if mcpTools == nil {
					mcpTools = map[string]string{}
				}
				mcpTools[spec.Name] = srv.Name
				if !slices.ContainsFunc(servers, func(s mcphost.Server) bool { return s.Name == srv.Name }) {
					servers = append(servers, srv)
				}
			} else if tool, ok := view.Lookup(spec.Name); ok && tools.IsConcurrent(tool) {
				concurrent = append(concurrent, spec.Name)
			}
		} else if tool, ok := view.Lookup(spec.Name); ok && tools.IsConcurrent(tool) {
			concurrent = append(concurrent, spec.Name)
		}
	}
	return &Offer{System: system, Tools: specs, Concurrent: concurrent, Daemon: daemon, MCPTools: mcpTools, MCPServers: servers}
}

// newTurn describes t, whose transcript is msgs, for the fleet; ctx is
// the prompt's (what the session's client serves itself).
func newTurn(ctx context.Context, t engine.ExecTurn, msgs []llm.Message) (*Turn, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	session := t.Session
	if session == "" {
		session = "memory"
	}
	lines := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		line, err := sessionfile.EncodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		lines[i] = line
	}
	model := t.Agent.Model()
	var sb *Sandbox
	if t.Sandbox != nil {
		sb = SandboxOf(t.Sandbox.Policy())
	}
	return &Turn{
		ID:         fmt.Sprintf("zot-%s-%d-%s", session, len(msgs), hex.EncodeToString(id[:])),
		Session:    t.Session,
		CWD:        t.CWD,
		Provider:   model.Provider,
		Model:      model.ID,
		Reasoning:  t.Agent.Reasoning(),
		Offer:      *offerOf(ctx, t),
		Gates:      true,
		Transcript: lines,
		MaxSteps:   MaxSteps,
		Meter:      t.Agent.Meter(),
		Sandbox:    sb,
	}, nil
}

// Close ends the client: its input closes, and after timeout it is
// killed. Turns still running go on in the fleet.
func (r *Remote) Close(timeout time.Duration) error {
	r.mu.Lock()
	r.closed = true
	p := r.cur
	r.mu.Unlock()
	p.wmu.Lock()
	err := p.in.Close()
	p.wmu.Unlock()
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	r.wait.Wait()
	return err
}
