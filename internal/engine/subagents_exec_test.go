package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// recordingExecutor runs each prompt on the agent it is given, in this
// process, and records the turns it was asked to run.
type recordingExecutor struct {
	mu    sync.Mutex
	turns []ExecTurn
}

func (e *recordingExecutor) Prompt(ctx context.Context, t ExecTurn, emit func(wire.Event)) error {
	e.mu.Lock()
	e.turns = append(e.turns, t)
	e.mu.Unlock()
	return t.Agent.Prompt(ctx, t.Text, t.Images, emit)
}

// TestSubAgentRunsOnTheParentsExecutor: a session whose prompts run on
// an executor (a fleet) runs its sub-agents' prompts there too, each
// naming the task call that started it, and the child's events still
// reach the parent's client as child_events of that call.
func TestSubAgentRunsOnTheParentsExecutor(t *testing.T) {
	script, _ := json.Marshal(map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"text": "Delegating.", "tool_calls": []any{map[string]any{"id": "t1", "name": "task", "args": map[string]any{"description": "list", "prompt": "child: list the files"}}}},
			map[string]any{"text": "The child is done."},
		}},
		map[string]any{"match": "child:", "steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{}}}},
			map[string]any{"text": "two files"},
		}},
	}})
	ex := &recordingExecutor{}
	s := newSession(t, string(script), func(c *SessionConfig) {
		c.Executor = ex
		c.Agents = AgentsConfig{Enabled: true}
	})
	c := newCollector()
	if err := s.Submit(prompt("p1", "delegate", c.sink), Queue, nil); err != nil {
		t.Fatal(err)
	}
	c.waitDone(t)
	ex.mu.Lock()
	turns := append([]ExecTurn(nil), ex.turns...)
	ex.mu.Unlock()
	if len(turns) != 2 {
		t.Fatalf("the executor ran %d prompts; want the session's and its sub-agent's", len(turns))
	}
	if turns[0].ParentCall != "" || turns[0].Agent != s.agent {
		t.Errorf("the first prompt: parent call %q, the session's agent %v; want the session's own", turns[0].ParentCall, turns[0].Agent == s.agent)
	}
	if turns[1].ParentCall != "t1" || turns[1].Agent == s.agent || turns[1].Text != "child: list the files" {
		t.Errorf("the second prompt: parent call %q, text %q; want the sub-agent's, started by t1", turns[1].ParentCall, turns[1].Text)
	}
	var children int
	var result *wire.ToolResultEvent
	for _, ev := range c.events() {
		switch e := ev.(type) {
		case *wire.ChildEvent:
			if e.ParentID != "t1" {
				t.Errorf("a child_event of %q; want t1", e.ParentID)
			}
			children++
		case *wire.ToolResultEvent:
			if e.ID == "t1" {
				result = e
			}
		}
	}
	if children == 0 || result == nil || result.IsError {
		t.Errorf("%d child_events, the task's result %+v; want the child's events and its answer", children, result)
	}
}
