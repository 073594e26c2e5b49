package main

import (
	"math"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// costScript: the parent's first call ($0.001 at the scripted model's
// made-up prices: 1000 input tokens) starts a child whose every call asks
// for ls and costs $0.001 too; the parent's second call answers.
func costScript(t *testing.T) string {
	u := map[string]any{"input": 1000}
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"text": "Delegating.", "tool_calls": []any{taskCall("t1", "loop", "child: loop")}, "usage": u},
			map[string]any{"text": "The child is done.", "usage": u},
		}},
		childTurn("child:",
			map[string]any{"text": "again", "tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{"path": "."}}}, "usage": u},
		),
	}})
}

// near reports whether two costs in dollars are the same to a picodollar.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestTaskCostCountsTowardTheParent: what a child spends is in the
// parent prompt's record (children_usage says how much) and in the
// session's running usage.
func TestTaskCostCountsTowardTheParent(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", costScript(t), "--permission", "allow", "--max-steps", "2")...)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	child := record(t, taskResult(t, evs, "t1"))
	if child.Turns != 2 || !near(child.Usage.CostUSD, 0.002) || child.Usage.Input != 2000 {
		t.Fatalf("the child's record: %+v; want 2 turns costing $0.002 (its step limit is the session's)", child)
	}
	d := doneOf(t, evs).Result
	if d.Children == nil || *d.Children != 1 || d.ChildrenUsage == nil || !near(d.ChildrenUsage.CostUSD, 0.002) || d.ChildrenUsage.Input != 2000 {
		t.Fatalf("the parent's record: children %v, children_usage %+v; want 1 and the child's $0.002", d.Children, d.ChildrenUsage)
	}
	if !near(d.Usage.CostUSD, 0.004) || d.Usage.Input != 4000 {
		t.Errorf("the parent's usage %+v; want its own $0.002 and the child's $0.002", d.Usage)
	}
	p.send(`{"id":"2","type":"get_state"}`)
	r, _ = p.response()
	wantResponse(t, r, "get_state", true, "")
	res, _ := r.Result()
	if st := res.(*wire.StateResult); !near(st.Usage.CostUSD, 0.004) || st.Usage.Input != 4000 {
		t.Errorf("the session's usage %+v; want $0.004 over 4000 input tokens, the child's included", st.Usage)
	}
}

// TestTaskCostBudgetIsJoint: --max-cost holds the parent and its child
// together: the child that spends the rest of it ends with max_cost, and
// so does the parent's turn, with no further model call.
func TestTaskCostBudgetIsJoint(t *testing.T) {
	p := start(t, nil, rpcArgs(t, "--script", costScript(t), "--permission", "allow", "--max-cost", "0.0035")...)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	res := taskResult(t, evs, "t1")
	child := record(t, res)
	// The parent's $0.001, then the child's calls: the third reaches $0.004.
	if child.Stop != wire.StopMaxCost || child.Turns != 3 || !near(child.Usage.CostUSD, 0.003) || !res.IsError {
		t.Fatalf("the child's record: %+v (error %v); want stop max_cost after 3 turns costing $0.003", child, res.IsError)
	}
	var last *wire.TurnEndEvent
	calls := 0
	for _, ev := range evs {
		switch e := ev.(type) {
		case *wire.TurnEndEvent:
			last = e
		case *wire.AssistantMessageEvent:
			calls++
		case *wire.ErrorEvent:
			t.Fatalf("error %s", e.Message)
		}
	}
	d := doneOf(t, evs).Result
	if last == nil || last.Stop != wire.StopMaxCost || last.Reason == "" || d.Stop != wire.StopMaxCost {
		t.Fatalf("the parent's last turn_end %+v, record %+v; want stop max_cost with a reason", last, d)
	}
	if calls != 1 || !near(d.Usage.CostUSD, 0.004) || d.ChildrenUsage == nil || !near(d.ChildrenUsage.CostUSD, 0.003) {
		t.Errorf("the parent made %d model calls, record usage %+v children %+v; want 1 call and $0.004 of which $0.003 the child's", calls, d.Usage, d.ChildrenUsage)
	}
}
