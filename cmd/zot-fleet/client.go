package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

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
	relayAddr := fs.String("relay", "127.0.0.1:0", "where the relay listens, HOST:PORT: the workers post the turns' events and ask about their calls there")
	toolStart := fs.Duration("tool-start-timeout", durable.ToolStartTimeout, "how long a tool call waits for a worker of the tool queue to take it before it is answered as not run")
	relayURL := fs.String("relay-url", "", "the URL the workers reach the relay at (default: http://the address --relay listens on; needed when it listens on every address)")
	history := fs.Int("history-events", DefaultHistoryEvents, "a turn's workflow continues as new between two steps once a run's history holds this many events (or when the cluster suggests it); 0 leaves it to the cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *toolStart < 0 {
		return usageError{fmt.Sprintf("--tool-start-timeout %v: want 0 or more", *toolStart)}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("zot-fleet client takes no arguments, got %q", fs.Arg(0))}
	}
	if *history < 0 {
		return usageError{fmt.Sprintf("--history-events %d: want 0 or more", *history)}
	}
	if *relayURL == "" {
		if host, _, err := net.SplitHostPort(*relayAddr); err == nil && (host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified()) {
			return usageError{fmt.Sprintf("--relay %s listens on every address, which workers cannot post to: give --relay-url, the URL they reach it at (http://HOST:PORT)", *relayAddr)}
		}
	} else if u, err := url.Parse(*relayURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return usageError{fmt.Sprintf("--relay-url %q: want http://HOST:PORT", *relayURL)}
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
	// The calls of the tools that live in the daemon: workers hand them
	// here, and zot runs them.
	calls := &daemonCalls{out: out, gone: make(chan struct{}), byKey: map[string]*daemonCall{}, byReq: map[string]*daemonCall{}}
	defer calls.close()
	// Whoever reaches the relay's address could post events into a
	// turn, show the session calls or run the daemon's tools: every
	// request must bring this client's secret, which the workers read
	// from the blob store (TurnInfo.Secret).
	secret, secretRef, err := newSecret(ctx, blobs)
	if err != nil {
		out.send(fleet.Frame{Type: fleet.FrameError, Error: err.Error()})
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/events", relay)
	mux.Handle("/intercept", asks)
	mux.Handle("/call", calls)
	mux.Handle("/turn", &gates{asks: asks, blobs: blobs})
	srv := &http.Server{Handler: authorized(secret, mux), ReadHeaderTimeout: 10 * time.Second}
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
	base := "http://" + ln.Addr().String()
	if *relayURL != "" {
		base = strings.TrimSuffix(*relayURL, "/")
	}
	s := &submitter{cl: cl, blobs: blobs, relay: relay, url: base + "/events", intercept: base + "/intercept", gate: base + "/turn", call: base + "/call", secret: secretRef, secretData: []byte(secret), calls: calls, c: &c, out: out, stderr: stderr, history: *history, toolStart: *toolStart}
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
			b := s.submitted(f.Turn)
			turns.Add(1)
			go func() {
				defer turns.Done()
				s.run(runCtx, f.Input, b)
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
			b := s.starting(f.Turn)
			turns.Add(1)
			go func() {
				defer turns.Done()
				s.abort(runCtx, f.Turn, reason, b)
			}()
		default:
			out.send(fleet.Frame{Type: fleet.FrameError, Turn: f.Turn, Error: fmt.Sprintf("unknown frame type %q", f.Type)})
		}
	}
}

// newSecret makes a secret for the relay's requests and stores it in
// the blob store, where the workers read it by the returned reference.
func newSecret(ctx context.Context, blobs fleet.Blobs) (secret, ref string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("making the relay's secret: %w", err)
	}
	secret = hex.EncodeToString(b)
	ref, err = blobs.Put(ctx, []byte(secret))
	if err != nil {
		return "", "", fmt.Errorf("storing the relay's secret: %w", err)
	}
	return secret, ref, nil
}

// authorized serves only the requests that bring secret (Authorization:
// Bearer), and answers the others 401 without reading them.
func authorized(secret string, next http.Handler) http.Handler {
	want := []byte("Bearer " + secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "this relay serves the workers of its own turns only", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
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
	// call is where workers hand the calls of the daemon's tools, which
	// calls passes on.
	call  string
	calls *daemonCalls
	// secret is the reference of the secret the relay asks for,
	// secretData the secret.
	secret     string
	secretData []byte
	c          *cluster
	out        *frames
	stderr     io.Writer
	history    int // TurnInput.HistoryEvents
	// toolStart is TurnInput.ToolStartTimeout.
	toolStart time.Duration

	mu sync.Mutex
	// begun holds, by turn, what the turns this client submits and that
	// have not ended say of their workflow's start: an abort that comes
	// before the start waits for it (the cluster would not know the turn).
	begun map[string]*begun
}

// begun is closed once a turn's workflow has started, or failed to.
type begun struct {
	once sync.Once
	ch   chan struct{}
}

func (b *begun) close() { b.once.Do(func() { close(b.ch) }) }

// submitted notes that turn id is being submitted here, before its
// workflow starts; its abort waits for the start.
func (s *submitter) submitted(id string) *begun {
	b := &begun{ch: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.begun == nil {
		s.begun = map[string]*begun{}
	}
	s.begun[id] = b
	return b
}

// starting returns what turn id, submitted here and not ended, says of
// its start; nil for a turn this client does not run.
func (s *submitter) starting(id string) *begun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.begun[id]
}

// ended forgets turn id's start.
func (s *submitter) ended(id string, b *begun) {
	b.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.begun[id] == b {
		delete(s.begun, id)
	}
}

// abort signals turn id's workflow to abort, once it has started when
// this client submits it (b), and again while the cluster is away: an
// abort the cluster never heard would leave the turn running to its end.
// It gives up when the workflow has ended (the cluster knows no running
// turn id) or ctx ends.
func (s *submitter) abort(ctx context.Context, id, reason string, b *begun) {
	if b != nil {
		select {
		case <-b.ch:
		case <-ctx.Done():
			return
		}
	}
	for try := 0; ; try++ {
		err := s.cl.SignalWorkflow(ctx, id, "", durable.AbortSignal, reason)
		var missing *serviceerror.NotFound
		if err == nil || errors.As(err, &missing) || ctx.Err() != nil {
			return
		}
		if try == 0 {
			fmt.Fprintf(s.stderr, "zot-fleet client: aborting %s: %v (trying again until the cluster hears it)\n", id, err)
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return
		}
	}
}

// attach signals turn id's workflow where this client's relay is (its
// secret by reference: stored again, for a store emptied since the
// client started), again while the cluster is away. A turn the cluster
// does not know as running is left to wait, which tells how it ended.
func (s *submitter) attach(ctx context.Context, id string) error {
	if _, err := s.blobs.Put(ctx, s.secretData); err != nil {
		return err
	}
	a := durable.Attach{Relay: s.url, Intercept: s.intercept, Gate: s.gate, Call: s.call, Secret: s.secret}
	for try := 0; ; try++ {
		err := s.cl.SignalWorkflow(ctx, id, "", durable.AttachSignal, a)
		var missing *serviceerror.NotFound
		if err == nil || errors.As(err, &missing) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if try == 0 {
			fmt.Fprintf(s.stderr, "zot-fleet client: attaching to %s: %v (trying again until the cluster hears it)\n", id, err)
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
func (s *submitter) run(ctx context.Context, t *fleet.Turn, b *begun) {
	defer s.calls.forget(t.ID)
	defer s.ended(t.ID, b)
	res, err := s.turn(ctx, t, b)
	if err != nil {
		s.out.send(fleet.Frame{Type: fleet.FrameError, Turn: t.ID, Error: err.Error()})
		return
	}
	s.out.send(fleet.Frame{Type: fleet.FrameDone, Turn: t.ID, Result: res})
}

// await writes the end of turn id, which an earlier client submitted,
// once it has pointed the turn's later activities at this client: their
// calls that ask the session, or run in the daemon, reach the zot that
// now waits for the turn.
func (s *submitter) await(ctx context.Context, id string) {
	defer s.calls.forget(id)
	err := s.attach(ctx, id)
	var out durable.TurnOutput
	if err == nil {
		out, err = s.wait(ctx, s.cl.GetWorkflow(ctx, id, ""))
	}
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

func (s *submitter) turn(ctx context.Context, t *fleet.Turn, b *begun) (*fleet.TurnResult, error) {
	var buf bytes.Buffer
	for _, line := range t.Transcript {
		buf.Write(line)
		buf.WriteByte('\n')
	}
	transcript, err := s.blobs.Put(ctx, buf.Bytes())
	if err != nil {
		return nil, err
	}
	// The secret is stored again with each turn (a store emptied since
	// the client started has it back), or the workers could not reach
	// the relay.
	if _, err := s.blobs.Put(ctx, s.secretData); err != nil {
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
			Reasoning: t.Reasoning, Offer: offerRef, ToolQueue: s.c.tools(), Sandbox: t.Sandbox, Call: s.call,
			Secret: s.secret,
		},
		Transcript:       transcript,
		UserIndex:        len(t.Transcript) - 1,
		MaxSteps:         t.MaxSteps,
		Meter:            t.Meter,
		HistoryEvents:    s.history,
		ToolStartTimeout: s.toolStart,
	}
	// The turn's end comes from the relay, posted by its last step after
	// its events, or from the cluster once the workflow has closed,
	// whichever is first: the relay's saves the last workflow task and
	// the wait for the workflow's close to be reported.
	ended := make(chan durable.TurnOutput, 1)
	stop := s.relay.Watch(t.ID, func(ev json.RawMessage) {
		s.out.send(fleet.Frame{Type: fleet.FrameEvent, Turn: t.ID, Event: ev})
	}, func(out durable.TurnOutput) {
		select {
		case ended <- out:
		default:
		}
	})
	defer stop()
	run, err := s.start(ctx, t, in)
	b.close()
	if err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithCancel(ctx)
	type waited struct {
		out durable.TurnOutput
		err error
	}
	closed := make(chan waited, 1)
	go func() {
		out, err := s.wait(waitCtx, run)
		closed <- waited{out, err}
	}()
	var out durable.TurnOutput
	select {
	case out = <-ended:
		cancel()
		<-closed
	case w := <-closed:
		cancel()
		if w.err != nil {
			return nil, w.err
		}
		out = w.out
	}
	return s.result(ctx, out)
}

// start starts t's workflow: a turn of its own, or a sub-agent's turn,
// which its parent's workflow starts as its child (durable.ChildUpdate).
func (s *submitter) start(ctx context.Context, t *fleet.Turn, in durable.TurnInput) (client.WorkflowRun, error) {
	if t.Parent == "" {
		// A cluster that is away for a while (restarted, failing over)
		// is waited for: starting again under the same id starts the
		// turn once (a start that got through gives back its run).
		give := time.Now().Add(startPatience)
		for {
			run, err := s.cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: t.ID, TaskQueue: s.c.queue}, durable.WorkflowName, in)
			if err == nil {
				return run, nil
			}
			if ctx.Err() != nil || !transient(err) || time.Now().After(give) {
				return nil, fmt.Errorf("starting the turn: %w", err)
			}
			fmt.Fprintf(s.stderr, "zot-fleet client: starting %s: %v (trying again)\n", t.ID, err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, fmt.Errorf("starting the turn: %w", ctx.Err())
			}
		}
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

// startPatience is how long a turn's start waits for a cluster that
// is away.
const startPatience = time.Minute

// transient reports whether err, from the cluster, may pass if asked
// again: the cluster is away, slow or busy.
func transient(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
		busy        *serviceerror.ResourceExhausted
	)
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &busy) || errors.Is(err, context.DeadlineExceeded)
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

// daemonCalls hands the calls of the tools that live in the daemon,
// which workers post (durable.DaemonCall), to zot (call frames), and
// their results (result frames) back. A call is known by its turn and
// key: a worker posting it again (another attempt, after the first's
// worker went away) waits for the same run. Once zot has gone (its
// frames ended) every call still running is answered gone, and the
// later ones not run.
type daemonCalls struct {
	out *frames

	mu     sync.Mutex
	n      int
	byKey  map[string]*daemonCall // turn and key
	byReq  map[string]*daemonCall // the request number of its frames
	gone   chan struct{}
	closed bool
}

// daemonCall is one call handed to zot.
type daemonCall struct {
	turn string
	done chan struct{} // closed once res is set
	res  durable.DaemonResult
}

func (d *daemonCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a call", http.StatusMethodNotAllowed)
		return
	}
	var req durable.DaemonCall
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := d.start(req)
	var res durable.DaemonResult
	select {
	case <-c.done:
		res = c.res
	case <-d.gone:
		select {
		case <-c.done:
			res = c.res
		default:
			res = durable.DaemonResult{Gone: true}
		}
	case <-r.Context().Done():
		return // the worker left; the call goes on, for its next attempt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// start returns the call of req, handed to zot unless it already was.
func (d *daemonCalls) start(req durable.DaemonCall) *daemonCall {
	key := fmt.Sprintf("%s.%d", req.Turn, req.Key)
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.byKey[key]; c != nil {
		return c
	}
	c := &daemonCall{turn: req.Turn, done: make(chan struct{})}
	d.byKey[key] = c
	if d.closed {
		c.res = durable.DaemonResult{NotRun: "the zot daemon holding the session has gone"}
		close(c.done)
		return c
	}
	d.n++
	id := fmt.Sprint(d.n)
	d.byReq[id] = c
	call := req.Call
	d.out.send(fleet.Frame{Type: fleet.FrameCall, Turn: req.Turn, Request: id, Call: &call})
	return c
}

// answer passes a result frame to its call.
func (d *daemonCalls) answer(f fleet.Frame) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.byReq[f.Request]
	if c == nil {
		return
	}
	delete(d.byReq, f.Request)
	if len(f.Output) > 0 {
		c.res = durable.DaemonResult{Output: f.Output}
	} else {
		c.res = durable.DaemonResult{NotRun: f.Error}
	}
	close(c.done)
}

// forget drops the calls of a turn that ended.
func (d *daemonCalls) forget(turn string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for key, c := range d.byKey {
		if c.turn == turn {
			delete(d.byKey, key)
		}
	}
}

// close answers the calls waiting, and those to come, as zot's gone.
func (d *daemonCalls) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		close(d.gone)
	}
}
