package sdk

import (
	"context"
	"encoding/json"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestRuntimeSubAgent: with Config.Agents the in-process Runtime offers
// the task tool; a profile given in the Config runs the child with its
// tools, the child's events come on the prompt's channel as ChildEvent,
// and its record is the task call's result.
func TestRuntimeSubAgent(t *testing.T) {
	script := `{"turns":[
		{"steps":[{"tool_calls":[{"id":"t1","name":"task","args":{"description":"d","prompt":"child: go","agent":"lister"}}]},{"text":"parent done"}]},
		{"match":"child:","steps":[{"tool_calls":[{"id":"r","name":"read","args":{"path":"x"}}]},{"text":"child done"}]}]}`
	rt := newScripted(t, script, Config{Agents: AgentsConfig{Enabled: true, Profiles: []AgentProfile{{Name: "lister", Description: "Lists.", Tools: []string{"ls"}}}}})
	ch, err := rt.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	var child []*wire.ChildEvent
	var result *wire.ToolResultEvent
	for _, ev := range drain(t, ch) {
		switch e := ev.(type) {
		case *wire.ChildEvent:
			child = append(child, e)
		case *wire.ToolResultEvent:
			if e.ID == "t1" {
				result = e
			}
		}
	}
	if len(child) == 0 || child[0].ParentID != "t1" || child[0].Agent != "lister" {
		t.Fatalf("child events: %d, first %+v", len(child), child)
	}
	var refused bool
	for _, ce := range child {
		_, ev, err := wire.DecodeFrame(ce.Event)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := ev.(*wire.ToolResultEvent); ok && r.ID == "r" {
			refused = r.IsError
		}
	}
	if !refused {
		t.Errorf("the lister's child read a file: read is not among its tools")
	}
	if result == nil {
		t.Fatal("no result of the task call")
	}
	var rec wire.PromptResult
	if err := json.Unmarshal([]byte(result.Content[0].(*wire.TextBlock).Text), &rec); err != nil || rec.Text != "child done" {
		t.Errorf("the task result: %+v %v", rec, err)
	}
	// Without Agents there is no task tool.
	plain := newScripted(t, script, Config{})
	ch, err = plain.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range drain(t, ch) {
		if r, ok := ev.(*wire.ToolResultEvent); ok && r.ID == "t1" && !r.IsError {
			t.Errorf("a Runtime without Agents ran a task call")
		}
	}
}
