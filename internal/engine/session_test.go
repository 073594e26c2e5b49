package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/tools"
	"zot.dev/zot/sdk/wire"
)

// guard bounds every wait in these tests; it only catches hangs.
const guard = 30 * time.Second

// slowScript streams many small deltas, so work stays busy long enough to
// queue, abort and observe.
const slowScript = `{"turns":[{"steps":[{"text":"one two three four five six seven eight nine ten","chunk":2,"delay_ms":5}]}]}`

// newSession starts a scripted session playing script ("" plays the
// built-in one) in a temporary directory.
func newSession(t *testing.T, script string, edit func(*SessionConfig)) *Session {
	t.Helper()
	dir := t.TempDir()
	set := ProviderSettings{}
	if script != "" {
		p := filepath.Join(dir, "script.json")
		if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		set.Script = p
	}
	h := NewHost(HostConfig{Providers: map[string]ProviderSettings{"scripted": set}})
	cfg := SessionConfig{Provider: "scripted", CWD: dir}
	if edit != nil {
		edit(&cfg)
	}
	s, err := h.NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return s
}

// collector is a sink that records events and signals each done.
type collector struct {
	mu    sync.Mutex
	evs   []wire.Event
	dones chan wire.ID
}

func newCollector() *collector { return &collector{dones: make(chan wire.ID, 100)} }

func (c *collector) sink(_ context.Context, ev wire.Event) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
	if _, ok := ev.(*wire.DoneEvent); ok {
		c.dones <- ev.GetPromptID()
	}
}

func (c *collector) events() []wire.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wire.Event(nil), c.evs...)
}

// waitDone waits for the next done and returns its prompt_id.
func (c *collector) waitDone(t *testing.T) string {
	t.Helper()
	select {
	case id := <-c.dones:
		return strings.Trim(id.String(), `"`)
	case <-time.After(guard):
		t.Fatal("no done")
		return ""
	}
}

func prompt(id, text string, sink Sink) Work {
	return Work{ID: wire.StringID(id), Prompt: &PromptInput{Text: text}, Sink: sink}
}

func TestQueueRunsInOrderAndStampsEvents(t *testing.T) {
	s := newSession(t, slowScript, nil)
	c := newCollector()
	var answers []string
	for i := 1; i <= 3; i++ {
		err := s.Submit(prompt(fmt.Sprint("p", i), "hi", c.sink), Queue, func(r wire.StartResult) {
			answers = append(answers, string(r.AppendJSON(nil)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{`{"started":true}`, `{"started":false,"queued":true,"position":1}`, `{"started":false,"queued":true,"position":2}`}
	if strings.Join(answers, " ") != strings.Join(want, " ") {
		t.Errorf("answers = %v", answers)
	}
	for i := 1; i <= 3; i++ {
		if got := c.waitDone(t); got != fmt.Sprint("p", i) {
			t.Errorf("done %d is %s", i, got)
		}
	}
	var seq int64
	owner := ""
	for _, ev := range c.events() {
		if ev.GetSeq() != seq+1 {
			t.Fatalf("%s: seq %d after %d", ev.Type(), ev.GetSeq(), seq)
		}
		seq = ev.GetSeq()
		id := ev.GetPromptID().String()
		if id != owner {
			// The events of one piece of work never interleave with
			// another's: a new prompt_id starts with user_message.
			if ev.Type() != wire.TypeUserMessageEvent {
				t.Fatalf("%s of %s starts a run", ev.Type(), id)
			}
			owner = id
		}
	}
	if err := s.Wait(context.Background()); err != nil || s.Busy() {
		t.Errorf("after the last done: Wait %v, busy %v", err, s.Busy())
	}
}

func TestRefuseBusy(t *testing.T) {
	s := newSession(t, slowScript, nil)
	c := newCollector()
	if err := s.Submit(prompt("a", "hi", c.sink), RefuseBusy, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(prompt("b", "hi", c.sink), RefuseBusy, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("second submit: %v", err)
	}
	if err := s.Clear(); !errors.Is(err, ErrBusy) {
		t.Errorf("Clear while busy: %v", err)
	}
	if err := s.SetModel("scripted"); !errors.Is(err, ErrBusy) {
		t.Errorf("SetModel while busy: %v", err)
	}
	c.waitDone(t)
	// The done is delivered once the session is idle: the next one starts.
	if err := s.Submit(prompt("c", "hi", c.sink), RefuseBusy, nil); err != nil {
		t.Errorf("submit after done: %v", err)
	}
	c.waitDone(t)
}

// TestAbortAllEndingOrder: the abort's answer precedes every ending it
// causes; the running work ends aborted, then each dropped one, in send
// order; busy stays true until the last done.
func TestAbortAllEndingOrder(t *testing.T) {
	for range 20 {
		s := newSession(t, slowScript, nil)
		var mu sync.Mutex
		var trail []string
		busyAtDone := map[string]bool{}
		sink := func(_ context.Context, ev wire.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e := ev.(type) {
			case *wire.TurnEndEvent:
				trail = append(trail, "end:"+strings.Trim(e.GetPromptID().String(), `"`)+":"+string(e.Stop))
			case *wire.DoneEvent:
				trail = append(trail, "done:"+strings.Trim(e.GetPromptID().String(), `"`))
				busyAtDone[strings.Trim(e.GetPromptID().String(), `"`)] = s.busyLocked() // the lock is held here
			}
		}
		for _, id := range []string{"a", "b", "c"} {
			if err := s.Submit(prompt(id, "hi", sink), Queue, nil); err != nil {
				t.Fatal(err)
			}
		}
		res := s.Abort(true, func(r wire.AbortResult) {
			mu.Lock()
			trail = append(trail, fmt.Sprintf("answer:%v:%d", r.Aborted, r.Dropped))
			mu.Unlock()
		})
		if !res.Aborted || res.Dropped != 2 {
			t.Fatalf("abort = %+v", res)
		}
		if err := s.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := strings.Join(trail, " ")
		mu.Unlock()
		want := "answer:true:2 end:a:aborted done:a end:b:aborted done:b end:c:aborted done:c"
		if got != want {
			t.Fatalf("trail:\n%s\nwant:\n%s", got, want)
		}
		if !busyAtDone["a"] || !busyAtDone["b"] || busyAtDone["c"] {
			t.Errorf("busy at each done: %v (want true, true, false)", busyAtDone)
		}
	}
}

func TestAbortWhenIdle(t *testing.T) {
	s := newSession(t, "", nil)
	if res := s.Abort(true, nil); res.Aborted || res.Dropped != 0 {
		t.Errorf("abort while idle = %+v", res)
	}
}

// TestObserversSeeEverything: observers get every event, stamped, before
// the sink, and can stop.
func TestObserversSeeEverything(t *testing.T) {
	s := newSession(t, "", nil)
	c := newCollector()
	var mu sync.Mutex
	var seen []int64
	stop := s.Observe(func(ev wire.Event) {
		mu.Lock()
		seen = append(seen, ev.GetSeq())
		mu.Unlock()
	})
	if err := s.Submit(prompt("p", "hi", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	evs := c.events()
	mu.Lock()
	n := len(seen)
	mu.Unlock()
	if n != len(evs) || seen[0] != evs[0].GetSeq() || seen[n-1] != evs[len(evs)-1].GetSeq() {
		t.Fatalf("observer saw %d events, sink %d", n, len(evs))
	}
	stop()
	stop()
	if err := s.Submit(prompt("q", "hi", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Errorf("a stopped observer still saw %d events", len(seen)-n)
	}
}

// TestIdleSessionHoldsNoGoroutine: the worker lives only while work does.
func TestIdleSessionHoldsNoGoroutine(t *testing.T) {
	s := newSession(t, "", nil)
	c := newCollector()
	for range 3 {
		if err := s.Submit(prompt("p", "hi", c.sink), Queue, nil); err != nil {
			t.Fatal(err)
		}
		c.waitDone(t)
		if err := s.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		working := s.working
		s.mu.Unlock()
		if working {
			t.Fatal("a worker is live on an idle session")
		}
	}
}

// TestCloseEndsWork: Close aborts the running work and drops the queue;
// each still gets its done, and later calls fail with ErrClosed.
func TestCloseEndsWork(t *testing.T) {
	s := newSession(t, slowScript, nil)
	c := newCollector()
	for _, id := range []string{"a", "b"} {
		if err := s.Submit(prompt(id, "hi", c.sink), Queue, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if a, b := c.waitDone(t), c.waitDone(t); a != "a" || b != "b" {
		t.Errorf("dones %s %s", a, b)
	}
	if err := s.Submit(prompt("c", "hi", c.sink), Queue, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after Close: %v", err)
	}
	if err := s.Clear(); !errors.Is(err, ErrClosed) {
		t.Errorf("Clear after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestShutdownRefusesWithItsReason is what `zot rpc` relies on at a
// signal.
func TestShutdownRefusesWithItsReason(t *testing.T) {
	s := newSession(t, slowScript, nil)
	c := newCollector()
	if err := s.Submit(prompt("a", "hi", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	s.Shutdown("the server is shutting down")
	if err := s.Submit(prompt("b", "hi", c.sink), Queue, nil); err == nil || err.Error() != "the server is shutting down" {
		t.Errorf("submit after Shutdown: %v", err)
	}
	c.waitDone(t)
}

// TestStalledSinkDoesNotBlockAbort: a door that waits for room in its
// output (Work.Ready, as the rpc door does) is released by an abort, and
// the abort never waits for it.
func TestStalledSinkDoesNotBlockAbort(t *testing.T) {
	s := newSession(t, slowScript, nil)
	entered := make(chan struct{}, 1)
	done := make(chan struct{})
	sink := func(_ context.Context, ev wire.Event) {
		if _, last := ev.(*wire.DoneEvent); last {
			close(done)
		}
	}
	ready := func(ctx context.Context) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-ctx.Done() // a reader that never reads
	}
	if err := s.Submit(Work{ID: wire.StringID("a"), Prompt: &PromptInput{Text: "hi"}, Sink: sink, Ready: ready}, Queue, nil); err != nil {
		t.Fatal(err)
	}
	<-entered
	aborted := make(chan wire.AbortResult, 1)
	go func() { aborted <- s.Abort(false, nil) }()
	select {
	case res := <-aborted:
		if !res.Aborted {
			t.Errorf("abort = %+v", res)
		}
	case <-time.After(guard):
		t.Fatal("abort waited for a reader that does not read")
	}
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("abort did not end work whose reader stalled")
	}
}

func TestPromptValidation(t *testing.T) {
	s := newSession(t, "", nil)
	c := newCollector()
	if err := s.Submit(Work{Prompt: &PromptInput{}, Sink: c.sink}, Queue, nil); err == nil {
		t.Error("an empty prompt was accepted")
	}
	if err := s.Submit(Work{Sink: c.sink}, Queue, nil); err == nil {
		t.Error("work that is neither a prompt nor a compaction was accepted")
	}
	if err := s.Submit(prompt("p", "hi", nil), Queue, nil); err == nil {
		t.Error("work without a sink was accepted")
	}
	var um *UnknownModelError
	if err := s.SetModel(""); !errors.As(err, &um) {
		t.Errorf("empty model id: %v", err)
	}
	if st := s.State(); st.Busy || st.Provider != "scripted" || st.Queued == nil {
		t.Errorf("state %+v", st)
	}
}

func TestNewSessionErrors(t *testing.T) {
	h := NewHost(HostConfig{})
	dir := t.TempDir()
	for _, cfg := range []SessionConfig{
		{},
		{Provider: "nope", CWD: dir},
		{Provider: "scripted", CWD: filepath.Join(dir, "missing")},
		{Provider: "scripted", CWD: dir, Tools: []string{"teleport"}},
	} {
		if s, err := h.NewSession(cfg); err == nil {
			s.Close()
			t.Errorf("NewSession(%+v) accepted", cfg)
		}
	}
	h.Close()
	if _, err := h.NewSession(SessionConfig{Provider: "scripted", CWD: dir}); !errors.Is(err, ErrClosed) {
		t.Errorf("NewSession after Close: %v", err)
	}
}

// approvalScript calls write and then bash, then answers.
const approvalScript = `{"turns":[{"steps":[
 {"tool_calls":[{"name":"write","args":{"path":"a.txt","content":"x"}},{"name":"bash","args":{"command":"echo hi"}}]},
 {"tool_calls":[{"name":"write","args":{"path":"b.txt","content":"y"}}]},
 {"text":"done"}]}]}`

// TestApproval: the approver is asked before write and bash; allow
// always is remembered per tool, reject answers the model with the
// reason, and an approval that times out rejects the call.
func TestApproval(t *testing.T) {
	type asked struct{ tool, args string }
	cases := []struct {
		name    string
		answer  func(req ApprovalRequest) Approval
		timeout time.Duration
		asks    int
		files   []string // files that must exist afterwards
		results []string // substrings of each tool result
	}{
		{
			name:    "allow always",
			answer:  func(ApprovalRequest) Approval { return Approval{Decision: AllowAlways} },
			asks:    2, // write once (then remembered), bash once
			files:   []string{"a.txt", "b.txt"},
			results: []string{"", "hi", ""},
		},
		{
			name: "reject bash",
			answer: func(req ApprovalRequest) Approval {
				if req.Tool == "bash" {
					return Approval{Decision: Reject, Reason: "no shell today"}
				}
				return Approval{Decision: AllowOnce}
			},
			asks:    3,
			files:   []string{"a.txt", "b.txt"},
			results: []string{"", "the user rejected the call: no shell today", ""},
		},
		{
			name:    "timeout",
			answer:  nil, // never answers
			timeout: 20 * time.Millisecond,
			asks:    3,
			results: []string{"approval: no answer", "approval: no answer", "approval: no answer"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []asked
			s := newSession(t, approvalScript, func(c *SessionConfig) {
				c.ApprovalTimeout = tc.timeout
				c.Approve = func(ctx context.Context, req ApprovalRequest) Approval {
					mu.Lock()
					got = append(got, asked{req.Tool, string(req.Args)})
					mu.Unlock()
					if req.ToolCallID == "" {
						t.Error("an approval request without the call's id")
					}
					if tc.answer == nil {
						<-ctx.Done()
						return Approval{Decision: AllowOnce} // too late to count
					}
					return tc.answer(req)
				}
			})
			c := newCollector()
			if err := s.Submit(prompt("p", "go", c.sink), Queue, nil); err != nil {
				t.Fatal(err)
			}
			c.waitDone(t)
			mu.Lock()
			if len(got) != tc.asks {
				t.Errorf("asked %d times: %v", len(got), got)
			}
			mu.Unlock()
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(s.CWD(), f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
			var results []string
			for _, ev := range c.events() {
				if r, ok := ev.(*wire.ToolResultEvent); ok {
					results = append(results, string(r.AppendJSON(nil)))
				}
			}
			if len(results) != len(tc.results) {
				t.Fatalf("results %v", results)
			}
			for i, want := range tc.results {
				if !strings.Contains(results[i], want) {
					t.Errorf("result %d = %s, want %q", i, results[i], want)
				}
			}
		})
	}
}

// TestApprovalAbort: an abort while the approver is asked rejects the
// call (it never runs) and ends the prompt aborted.
func TestApprovalAbort(t *testing.T) {
	asking := make(chan struct{})
	s := newSession(t, approvalScript, func(c *SessionConfig) {
		c.Approve = func(ctx context.Context, req ApprovalRequest) Approval {
			close(asking)
			<-ctx.Done()
			return Approval{Decision: AllowAlways}
		}
	})
	c := newCollector()
	if err := s.Submit(prompt("p", "go", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	<-asking
	s.Abort(false, nil)
	c.waitDone(t)
	if _, err := os.Stat(filepath.Join(s.CWD(), "a.txt")); !os.IsNotExist(err) {
		t.Errorf("the call ran after an abort: %v", err)
	}
	evs := c.events()
	if te, ok := evs[len(evs)-2].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
		t.Errorf("ended with %s", evs[len(evs)-2].AppendJSON(nil))
	}
}

// echoTool is a tool another source (an extension, an MCP server) adds.
type echoTool struct{}

func (echoTool) Name() string            { return "echo" }
func (echoTool) Description() string     { return "Echo the arguments. Test only." }
func (echoTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (echoTool) Run(_ context.Context, call tools.Call) (tools.Result, error) {
	return tools.Text("echo " + string(call.Args)), nil
}

// TestToolsAndInterceptorsAttach: a tool source and an interceptor added
// to a live session reach the next prompt, and the system prompt lists
// the new tool.
func TestToolsAndInterceptorsAttach(t *testing.T) {
	s := newSession(t, `{"turns":[{"steps":[{"tool_calls":[{"name":"echo","args":{"x":1}}]},{"text":"ok"}]}]}`, nil)
	system := systemPrompt(SessionConfig{}, s.CWD(), s.Tools(), &promptParts{})
	if strings.Contains(system(), "echo") {
		t.Fatal("the system prompt lists a tool nobody added")
	}
	s.Tools().Set("ext:test", []tools.Tool{echoTool{}})
	if !strings.Contains(system(), "echo") {
		t.Error("the system prompt does not list the added tool")
	}
	var seen []string
	remove := s.Interceptors().Add(agent.Interceptor{Name: "ext:test", BeforeTool: func(_ context.Context, call agent.ToolCall) agent.Verdict {
		seen = append(seen, call.Name)
		return agent.Verdict{Args: json.RawMessage(`{"x":2}`)}
	}})
	defer remove()
	c := newCollector()
	if err := s.Submit(prompt("p", "go", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	if len(seen) != 1 || seen[0] != "echo" {
		t.Errorf("interceptor saw %v", seen)
	}
	var result string
	for _, ev := range c.events() {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			result = string(r.AppendJSON(nil))
		}
	}
	if !strings.Contains(result, `echo {\"x\":2}`) {
		t.Errorf("result %s", result)
	}
}

// TestAbortAnswerMatchesTheEnding: once the work's last turn_end is out,
// an abort says it aborted nothing; once an abort said aborted, a last
// turn_end that was about to say end_turn says aborted.
func TestAbortAnswerMatchesTheEnding(t *testing.T) {
	s := &Session{}
	j := &job{abortAnswered: true}
	te := &wire.TurnEndEvent{Stop: wire.StopEndTurn}
	s.settle(j, te)
	if te.Stop != wire.StopAborted || !j.ended || !j.abortedEnd {
		t.Errorf("after an abort said aborted: %s, ended %v", te.Stop, j.ended)
	}
	j = &job{cancel: func() {}}
	s.settle(j, &wire.TurnEndEvent{Stop: wire.StopToolUse})
	if j.ended {
		t.Error("a tool_use turn_end ended the work")
	}
	s.settle(j, &wire.TurnEndEvent{Stop: wire.StopEndTurn})
	if !j.ended {
		t.Error("the last turn_end did not end the work")
	}
	s.current = j
	if res := s.Abort(false, nil); res.Aborted {
		t.Error("an abort after the last turn_end said aborted")
	}
}
