package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"zot.dev/zot/cmd/zot-fleet/durable"
	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/ndjson"
	"zot.dev/zot/internal/sessionfile"
)

// DefaultHistoryEvents is how many events a run of a turn's workflow
// holds before the turn continues as new: a fifth of Temporal's cap of
// 51,200, some 800 steps of a dozen events each.
const DefaultHistoryEvents = 10_000

// runClient submits the turns zot sends on stdin and writes their events
// and ends on stdout (fleet.Frame lines), until stdin ends. Turns still
// running then go on in the fleet.
func runClient(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("zot-fleet client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c cluster
	c.flags(fs)
	relayAddr := fs.String("relay", "127.0.0.1:0", "where the workers post the turns' events: an address they reach")
	history := fs.Int("history-events", DefaultHistoryEvents, "a turn's workflow continues as new between two steps once a run's history holds this many events (or when the cluster suggests it); 0 leaves it to the cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("zot-fleet client takes no arguments, got %q", fs.Arg(0))}
	}
	if *history < 0 {
		return usageError{fmt.Sprintf("--history-events %d: want 0 or more", *history)}
	}
	out := &frames{w: stdout}
	blobs, err := c.store()
	if err != nil {
		out.send(fleet.Frame{Type: fleet.FrameError, Error: err.Error()})
		return err
	}
	cl, err := c.dial(stderr)
	if err != nil {
		out.send(fleet.Frame{Type: fleet.FrameError, Error: err.Error()})
		return err
	}
	defer cl.Close()
	ln, err := net.Listen("tcp", *relayAddr)
	if err != nil {
		out.send(fleet.Frame{Type: fleet.FrameError, Error: err.Error()})
		return fmt.Errorf("the relay: %w", err)
	}
	relay := durable.NewRelay()
	asks := &intercepts{out: out, waiting: map[string]chan *fleet.ToolVerdict{}}
	mux := http.NewServeMux()
	mux.Handle("/events", relay)
	mux.Handle("/intercept", asks)
	mux.Handle("/turn", &gates{asks: asks, blobs: blobs})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	defer func() {
		_ = srv.Close()
		wg.Wait()
	}()
	// The calls of the tools that live in the daemon come to this
	// client's own task queue, one per client: a worker there hands each
	// to the daemon and returns its answer.
	calls := &daemonCalls{out: out, gone: make(chan struct{}), waiting: map[string]chan fleet.Frame{}}
	defer calls.close()
	daemonQueue, err := newDaemonQueue(c.queue)
	if err != nil {
		out.send(fleet.Frame{Type: fleet.FrameError, Error: err.Error()})
		return err
	}
	dw := worker.New(cl, daemonQueue, worker.Options{})
	dt := &durable.DaemonTools{Blobs: blobs, Run: calls.run}
	dw.RegisterActivityWithOptions(dt.Tool, activity.RegisterOptions{Name: durable.DaemonToolActivity})
	if err := dw.Start(); err != nil {
		err = c.explain(err)
		out.send(fleet.Frame{Type: fleet.FrameError, Error: err.Error()})
		return fmt.Errorf("serving the daemon's tools: %w", err)
	}
	defer dw.Stop()
	base := "http://" + ln.Addr().String()
	s := &submitter{cl: cl, blobs: blobs, relay: relay, url: base + "/events", intercept: base + "/intercept", gate: base + "/turn", daemonQueue: daemonQueue, c: &c, out: out, stderr: stderr, history: *history}
	out.send(fleet.Frame{Type: fleet.FrameReady})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := ndjson.NewReader(stdin, 0)
	var turns sync.WaitGroup
	defer turns.Wait()
	defer cancel()
	for {
		line, err := lines.Next()
		if err != nil {
			calls.close() // nobody is left to run them
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var f fleet.Frame
		if err := json.Unmarshal(line, &f); err != nil {
			out.send(fleet.Frame{Type: fleet.FrameError, Error: "a line that is no frame: " + err.Error()})
			continue
		}
		switch f.Type {
		case fleet.FrameSubmit:
			if f.Input == nil || f.Turn == "" {
				out.send(fleet.Frame{Type: fleet.FrameError, Turn: f.Turn, Error: "submit without a turn"})
				continue
			}
			turns.Add(1)
			go func() {
				defer turns.Done()
				s.run(runCtx, f.Input)
			}()
		case fleet.FrameVerdict:
			asks.answer(f.Request, f.Verdict)
		case fleet.FrameResult:
			calls.answer(f)
		case fleet.FrameAwait:
			turns.Add(1)
			go func() {
				defer turns.Done()
				s.await(runCtx, f.Turn)
			}()
		case fleet.FrameAbort:
			reason := f.Error
			if reason == "" {
				reason = "aborted"
			}
			if err := cl.SignalWorkflow(runCtx, f.Turn, "", durable.AbortSignal, reason); err != nil {
				fmt.Fprintf(stderr, "zot-fleet client: aborting %s: %v\n", f.Turn, err)
			}
		default:
			out.send(fleet.Frame{Type: fleet.FrameError, Turn: f.Turn, Error: fmt.Sprintf("unknown frame type %q", f.Type)})
		}
	}
}

// frames writes frames, one line each, one at a time.
type frames struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frames) send(fr fleet.Frame) {
	line, err := json.Marshal(fr)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = f.w.Write(append(line, '\n'))
}

// submitter runs turns as workflows.
type submitter struct {
	cl        client.Client
	blobs     fleet.Dir
	relay     *durable.Relay
	url       string
	intercept string
	// gate is where workers show the session a step about to begin.
	gate string
	// daemonQueue is the task queue of this client's daemon's tools.
	daemonQueue string
	c           *cluster
	out         *frames
	stderr      io.Writer
	history     int // TurnInput.HistoryEvents
}

// gateOf is where t's steps are shown to the session: "" when the zot
// that sent t does not answer gate frames.
func (s *submitter) gateOf(t *fleet.Turn) string {
	if !t.Gates {
		return ""
	}
	return s.gate
}

// run submits t, relays its events and writes its end.
func (s *submitter) run(ctx context.Context, t *fleet.Turn) {
	res, err := s.turn(ctx, t)
	if err != nil {
		s.out.send(fleet.Frame{Type: fleet.FrameError, Turn: t.ID, Error: err.Error()})
		return
	}
	s.out.send(fleet.Frame{Type: fleet.FrameDone, Turn: t.ID, Result: res})
}

// await writes the end of turn id, which an earlier client submitted.
func (s *submitter) await(ctx context.Context, id string) {
	out, err := s.wait(ctx, s.cl.GetWorkflow(ctx, id, ""))
	var res *fleet.TurnResult
	if err == nil {
		res, err = s.result(ctx, out)
	}
	if err != nil {
		s.out.send(fleet.Frame{Type: fleet.FrameError, Turn: id, Error: err.Error()})
		return
	}
	s.out.send(fleet.Frame{Type: fleet.FrameDone, Turn: id, Result: res})
}

func (s *submitter) turn(ctx context.Context, t *fleet.Turn) (*fleet.TurnResult, error) {
	var buf bytes.Buffer
	for _, line := range t.Transcript {
		buf.Write(line)
		buf.WriteByte('\n')
	}
	transcript, err := s.blobs.Put(ctx, buf.Bytes())
	if err != nil {
		return nil, err
	}
	offer, err := json.Marshal(t.Offer)
	if err != nil {
		return nil, err
	}
	offerRef, err := s.blobs.Put(ctx, offer)
	if err != nil {
		return nil, err
	}
	in := durable.TurnInput{
		Turn: durable.TurnInfo{
			ID: t.ID, Relay: s.url, Intercept: s.intercept, Gate: s.gateOf(t), CWD: t.CWD, Provider: t.Provider, Model: t.Model,
			Reasoning: t.Reasoning, Offer: offerRef, ToolQueue: s.c.tools(), Sandbox: t.Sandbox, DaemonQueue: s.daemonQueue,
		},
		Transcript:    transcript,
		UserIndex:     len(t.Transcript) - 1,
		MaxSteps:      t.MaxSteps,
		Meter:         t.Meter,
		HistoryEvents: s.history,
	}
	stop := s.relay.Watch(t.ID, func(ev json.RawMessage) {
		s.out.send(fleet.Frame{Type: fleet.FrameEvent, Turn: t.ID, Event: ev})
	})
	defer stop()
	run, err := s.start(ctx, t, in)
	if err != nil {
		return nil, err
	}
	out, err := s.wait(ctx, run)
	if err != nil {
		return nil, err
	}
	return s.result(ctx, out)
}

// start starts t's workflow: a turn of its own, or a sub-agent's turn,
// which its parent's workflow starts as its child (durable.ChildUpdate).
func (s *submitter) start(ctx context.Context, t *fleet.Turn, in durable.TurnInput) (client.WorkflowRun, error) {
	if t.Parent == "" {
		run, err := s.cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: t.ID, TaskQueue: s.c.queue}, durable.WorkflowName, in)
		if err != nil {
			return nil, fmt.Errorf("starting the turn: %w", err)
		}
		return run, nil
	}
	h, err := s.cl.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   t.Parent,
		UpdateName:   durable.ChildUpdate,
		Args:         []any{durable.ChildStart{ID: t.ID, Call: t.ParentCall, Input: in}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var runID string
	if err == nil {
		err = h.Get(ctx, &runID)
	}
	if err != nil {
		return nil, fmt.Errorf("starting the sub-agent's turn under %s: %w", t.Parent, err)
	}
	return s.cl.GetWorkflow(ctx, t.ID, runID), nil
}

// wait waits for the turn's end, through a cluster that is away for a
// while, following the runs the turn continues as new into (Get follows
// them from any run of the chain).
func (s *submitter) wait(ctx context.Context, run client.WorkflowRun) (durable.TurnOutput, error) {
	var out durable.TurnOutput
	for {
		err := run.Get(ctx, &out)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		var missing *serviceerror.NotFound
		if errors.As(err, &missing) {
			return out, fmt.Errorf("turn %s: %w", run.GetID(), err)
		}
		fmt.Fprintf(s.stderr, "zot-fleet client: waiting for %s: %v (trying again)\n", run.GetID(), err)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return out, ctx.Err()
		}
		run = s.cl.GetWorkflow(ctx, run.GetID(), run.GetRunID())
	}
}

// result reads the turn's end from the blob store.
func (s *submitter) result(ctx context.Context, out durable.TurnOutput) (*fleet.TurnResult, error) {
	data, err := s.blobs.Get(ctx, out.Transcript)
	if err != nil {
		return nil, err
	}
	res := &fleet.TurnResult{Meter: out.Meter, Code: out.Code, Message: out.Message, Aborted: out.Aborted}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) > 0 {
			res.Transcript = append(res.Transcript, json.RawMessage(line))
		}
	}
	if len(out.Results) > 0 {
		rs, err := durable.ReadResults(ctx, s.blobs, out.Results)
		if err != nil {
			return nil, err
		}
		line, err := sessionfile.EncodeMessage(agent.ResultsMessage(rs))
		if err != nil {
			return nil, err
		}
		res.Transcript = append(res.Transcript, line)
	}
	return res, nil
}

// intercepts passes the tool calls workers are about to run to zot, for
// the session's interceptors, and their verdicts back.
type intercepts struct {
	out *frames

	mu      sync.Mutex
	n       int
	waiting map[string]chan *fleet.ToolVerdict
}

func (in *intercepts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Turn string         `json:"turn"`
		Call fleet.ToolCall `json:"call"`
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST a tool call", http.StatusMethodNotAllowed)
		return
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := in.ask(r.Context(), fleet.Frame{Type: fleet.FrameIntercept, Turn: req.Turn, Call: &req.Call})
	if v == nil {
		return // the worker left
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ask sends f to zot, numbered, and waits for its verdict (one that
// says nothing blocks); nil once ctx ends.
func (in *intercepts) ask(ctx context.Context, f fleet.Frame) *fleet.ToolVerdict {
	ch := make(chan *fleet.ToolVerdict, 1)
	in.mu.Lock()
	in.n++
	id := fmt.Sprint(in.n)
	in.waiting[id] = ch
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		delete(in.waiting, id)
		in.mu.Unlock()
	}()
	f.Request = id
	in.out.send(f)
	select {
	case v := <-ch:
		if v == nil {
			v = &fleet.ToolVerdict{Block: true, Reason: "no verdict came"}
		}
		return v
	case <-ctx.Done():
		return nil
	}
}

// gates passes the steps workers are about to make to zot, for the
// session's BeforeTurn interceptors, and answers with their verdict and
// the reference of what the step offers (stored in the blob store).
type gates struct {
	asks  *intercepts
	blobs fleet.Blobs
}

func (g *gates) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Turn string `json:"turn"`
		Step int    `json:"step"`
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST a step", http.StatusMethodNotAllowed)
		return
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := g.asks.ask(r.Context(), fleet.Frame{Type: fleet.FrameGate, Turn: req.Turn, Step: req.Step})
	if v == nil {
		return // the worker left
	}
	out := durable.GateVerdict{Block: v.Block, Reason: v.Reason}
	if v.Offer != nil {
		data, err := json.Marshal(v.Offer)
		if err == nil {
			out.Offer, err = g.blobs.Put(r.Context(), data)
		}
		if err != nil {
			http.Error(w, "storing the step's offer: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// answer passes a verdict to the intercept waiting for it.
func (in *intercepts) answer(id string, v *fleet.ToolVerdict) {
	in.mu.Lock()
	ch := in.waiting[id]
	in.mu.Unlock()
	if ch != nil {
		ch <- v
	}
}

// newDaemonQueue names the task queue of one client's daemon tools.
func newDaemonQueue(queue string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return queue + "-daemon-" + hex.EncodeToString(b[:]), nil
}

// daemonCalls hands the calls of the tools that live in the daemon to
// zot (call frames) and passes their results (result frames) back to
// the activities waiting for them. Once zot has gone (its frames ended)
// every call fails at once: nobody is left to run it.
type daemonCalls struct {
	out *frames

	mu      sync.Mutex
	n       int
	waiting map[string]chan fleet.Frame
	gone    chan struct{}
	closed  bool
}

// run hands call c of turn to zot and waits for its result.
func (d *daemonCalls) run(ctx context.Context, turn string, c durable.Call) (json.RawMessage, error) {
	ch := make(chan fleet.Frame, 1)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, temporal.NewNonRetryableApplicationError("the zot daemon holding the session has gone", durable.NotRunError, nil)
	}
	d.n++
	id := fmt.Sprint(d.n)
	d.waiting[id] = ch
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.waiting, id)
		d.mu.Unlock()
	}()
	d.out.send(fleet.Frame{Type: fleet.FrameCall, Turn: turn, Request: id, Call: &fleet.ToolCall{ID: c.ID, Name: c.Name, Args: c.Args, ArgsError: c.ArgsError}})
	select {
	case f := <-ch:
		if len(f.Output) == 0 {
			return nil, temporal.NewNonRetryableApplicationError(f.Error, durable.NotRunError, nil)
		}
		return f.Output, nil
	case <-d.gone:
		return nil, errors.New("the zot daemon holding the session went away while the call ran")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answer passes a result frame to the call waiting for it.
func (d *daemonCalls) answer(f fleet.Frame) {
	d.mu.Lock()
	ch := d.waiting[f.Request]
	d.mu.Unlock()
	if ch != nil {
		ch <- f
	}
}

// close fails the calls waiting and those to come.
func (d *daemonCalls) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		close(d.gone)
	}
}
