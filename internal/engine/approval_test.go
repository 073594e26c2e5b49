package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// writeScript calls write, then bash, then answers.
const writeScript = `{"turns":[{"steps":[
	{"tool_calls":[{"name":"write","args":{"path":"a.txt","content":"x"}},{"name":"bash","args":{"command":"echo hi"}}]},
	{"text":"ok"}]}]}`

// requests is a sink that also hands each permission_request on.
type requests struct {
	*collector
	asked chan *wire.PermissionRequestEvent
}

func newRequests() *requests {
	return &requests{collector: newCollector(), asked: make(chan *wire.PermissionRequestEvent, 10)}
}

func (r *requests) sink(ctx context.Context, ev wire.Event) {
	r.collector.sink(ctx, ev)
	if pr, ok := ev.(*wire.PermissionRequestEvent); ok {
		r.asked <- pr
	}
}

func (r *requests) next(t *testing.T) *wire.PermissionRequestEvent {
	t.Helper()
	select {
	case pr := <-r.asked:
		return pr
	case <-time.After(guard):
		t.Fatal("no permission_request")
		return nil
	}
}

// results returns the tool_result events, in order.
func results(evs []wire.Event) []*wire.ToolResultEvent {
	var out []*wire.ToolResultEvent
	for _, ev := range evs {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			out = append(out, r)
		}
	}
	return out
}

// TestAnswerApprovals: with AnswerApprovals, each write and bash waits
// for the door's answer to its permission_request, which the engine
// delivers in the work's stream, stamped, after the call's turn_end; an
// answer to a request that no longer waits is refused.
func TestAnswerApprovals(t *testing.T) {
	s := newSession(t, writeScript, func(c *SessionConfig) { c.AnswerApprovals = true })
	var observed []string
	stop := s.Observe(func(ev wire.Event) { observed = append(observed, ev.Type()) })
	defer stop()
	r := newRequests()
	if err := s.Submit(prompt("p1", "go", r.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	first := r.next(t)
	if first.RequestID != "perm-1" || first.Tool != "write" || !strings.Contains(string(first.Args), `"a.txt"`) || first.TimeoutMs != nil {
		t.Errorf("first request %s", first.AppendJSON(nil))
	}
	if first.GetPromptID().String() != `"p1"` || first.GetSeq() == 0 {
		t.Errorf("request not stamped: %s", first.AppendJSON(nil))
	}
	if err := s.AnswerApproval("perm-9", Approval{Decision: AllowOnce}); !errors.Is(err, ErrNoApprovalRequest) {
		t.Errorf("answer to a request never made: %v", err)
	}
	if err := s.AnswerApproval(first.RequestID, Approval{Decision: AllowOnce}); err != nil {
		t.Fatal(err)
	}
	if err := s.AnswerApproval(first.RequestID, Approval{Decision: AllowOnce}); !errors.Is(err, ErrNoApprovalRequest) || !strings.Contains(err.Error(), "no longer waits") {
		t.Errorf("second answer to one request: %v", err)
	}
	second := r.next(t)
	if second.RequestID != "perm-2" || second.Tool != "bash" {
		t.Errorf("second request %s", second.AppendJSON(nil))
	}
	if err := s.AnswerApproval(second.RequestID, Approval{Decision: Reject, Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	r.waitDone(t)
	evs := r.events()
	res := results(evs)
	if len(res) != 2 || res[0].IsError || !res[1].IsError || !strings.Contains(string(res[1].AppendJSON(nil)), "the user rejected the call: not now") {
		t.Fatalf("results %v", res)
	}
	// The order: turn_end, then per call its request and its result.
	var got []string
	for _, ev := range evs {
		switch ev.Type() {
		case "turn_end", "permission_request", "tool_result":
			got = append(got, ev.Type())
		}
	}
	want := []string{"turn_end", "permission_request", "tool_result", "permission_request", "tool_result", "turn_end"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if slices.Index(observed, "permission_request") < 0 {
		t.Errorf("observers did not see the request: %v", observed)
	}
}

// TestApprovalTimeoutAndAbort: no answer within the timeout, or an abort,
// rejects the call, and the request then no longer takes an answer.
func TestApprovalTimeoutAndAbort(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		s := newSession(t, writeScript, func(c *SessionConfig) {
			c.AnswerApprovals = true
			c.ApprovalTimeout = 50 * time.Millisecond
		})
		r := newRequests()
		if err := s.Submit(prompt("p1", "go", r.sink), Queue, nil); err != nil {
			t.Fatal(err)
		}
		if pr := r.next(t); pr.TimeoutMs == nil || *pr.TimeoutMs != 50 {
			t.Errorf("timeout_ms of %s", pr.AppendJSON(nil))
		}
		r.next(t) // the bash call's, after the write timed out
		r.waitDone(t)
		res := results(r.events())
		if len(res) != 2 || !res[0].IsError || !strings.Contains(string(res[0].AppendJSON(nil)), "no answer within 50ms") {
			t.Fatalf("results %v", res)
		}
		if err := s.AnswerApproval("perm-1", Approval{Decision: AllowOnce}); !errors.Is(err, ErrNoApprovalRequest) {
			t.Errorf("answer after the timeout: %v", err)
		}
	})
	t.Run("abort", func(t *testing.T) {
		s := newSession(t, writeScript, func(c *SessionConfig) { c.AnswerApprovals = true })
		r := newRequests()
		if err := s.Submit(prompt("p1", "go", r.sink), Queue, nil); err != nil {
			t.Fatal(err)
		}
		pr := r.next(t)
		s.Abort(false, nil)
		r.waitDone(t)
		if err := s.AnswerApproval(pr.RequestID, Approval{Decision: AllowOnce}); !errors.Is(err, ErrNoApprovalRequest) {
			t.Errorf("answer after the abort: %v", err)
		}
		for _, res := range results(r.events()) {
			if !res.IsError {
				t.Errorf("a call ran after the abort: %s", res.AppendJSON(nil))
			}
		}
	})
	t.Run("end", func(t *testing.T) {
		s := newSession(t, writeScript, func(c *SessionConfig) { c.AnswerApprovals = true })
		r := newRequests()
		if err := s.Submit(prompt("p1", "go", r.sink), Queue, nil); err != nil {
			t.Fatal(err)
		}
		r.next(t)
		s.EndApprovals("the client closed its input")
		r.waitDone(t)
		res := results(r.events())
		if len(res) != 2 || !res[0].IsError || !res[1].IsError || !strings.Contains(string(res[1].AppendJSON(nil)), "the client closed its input") {
			t.Fatalf("results %v", res)
		}
		if n := strings.Count(strings.Join(typesOf(r.events()), " "), "permission_request"); n != 1 {
			t.Errorf("%d requests after the end of answers, want only the first", n)
		}
	})
}

// TestApproverSeesTheRequestID: an Approver's request carries the id its
// permission_request event shows.
func TestApproverSeesTheRequestID(t *testing.T) {
	var ids []string
	s := newSession(t, writeScript, func(c *SessionConfig) {
		c.Approve = func(ctx context.Context, req ApprovalRequest) Approval {
			ids = append(ids, req.ID+":"+req.Tool)
			return Approval{Decision: AllowAlways}
		}
	})
	r := newRequests()
	if err := s.Submit(prompt("p1", "go", r.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	r.waitDone(t)
	if strings.Join(ids, ",") != "perm-1:write,perm-2:bash" {
		t.Errorf("asked %v", ids)
	}
	if err := s.AnswerApproval("perm-1", Approval{}); !errors.Is(err, ErrNoApprovalRequest) {
		t.Errorf("a session with an Approver took a door's answer: %v", err)
	}
}

// TestSetModelTakesAnyID: set_model takes an id the catalog does not list
// (with its defaults), and the model list then shows it.
func TestSetModelTakesAnyID(t *testing.T) {
	s := newSession(t, "", nil)
	if err := s.SetModel("my-finetune-v3"); err != nil {
		t.Fatal(err)
	}
	if s.Model() != "my-finetune-v3" {
		t.Errorf("model %s", s.Model())
	}
	list := s.Models()
	i := slices.IndexFunc(list, func(m wire.ModelInfo) bool { return m.ID == "my-finetune-v3" })
	if i < 0 || list[i].Provider != "scripted" || list[i].ContextWindow <= 0 {
		t.Fatalf("models %+v", list)
	}
	if !slices.IsSortedFunc(list, func(a, b wire.ModelInfo) int { return strings.Compare(a.ID, b.ID) }) {
		t.Errorf("models not sorted: %+v", list)
	}
}

func typesOf(evs []wire.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type()
	}
	return out
}
