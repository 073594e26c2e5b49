package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/providertest"
)

func TestDefaultShape(t *testing.T) {
	s := Default()
	if len(s.Turns) != 2 || len(s.Turns[0].Steps) != 2 || len(s.Turns[1].Steps) != 1 {
		t.Fatalf("shape %+v", s)
	}
	first := s.Turns[0].Steps[0]
	if first.Thinking == "" || first.Text == "" || first.Usage == nil || first.Error != nil {
		t.Errorf("turn 0 step 0 = %+v", first)
	}
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "bash" {
		t.Fatalf("turn 0 step 0 calls %+v", first.ToolCalls)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(first.ToolCalls[0].Args), &args); err != nil || len(args) != 1 || args["command"] != "echo hello from zot && ls" {
		t.Errorf("bash args %s (%v)", first.ToolCalls[0].Args, err)
	}
	second := s.Turns[0].Steps[1]
	if !strings.Contains(second.Text, "ran") || len(second.ToolCalls) != 0 || second.Usage == nil || second.Usage.CacheRead == 0 {
		t.Errorf("turn 0 step 1 = %+v", second)
	}
	if later := s.Turns[1].Steps[0]; !later.Echo || later.Usage == nil {
		t.Errorf("turn 1 = %+v", later)
	}
	s.Turns[0].Steps[0].Text = "changed"
	if Default().Turns[0].Steps[0].Text == "changed" {
		t.Error("Default returned shared state")
	}
}

// TestDefaultAgentLoop plays the default script the way the agent drives a
// provider: each tool call is answered with a tool result, and a prompt ends
// when a call ends its turn.
func TestDefaultAgentLoop(t *testing.T) {
	p := New(Config{})
	var msgs []llm.Message
	seen := map[llm.EventKind]int{}
	sink := func(ev llm.Event) { seen[ev.Kind]++ }
	for i := 1; i <= 100; i++ {
		prompt := fmt.Sprintf("prompt %d", i)
		msgs = append(msgs, user(prompt))
		calls := 0
		for {
			resp, err := p.Stream(providertest.HangGuard(t), request(msgs...), sink)
			if err != nil {
				t.Fatalf("prompt %d: %v", i, err)
			}
			msgs = append(msgs, resp.Message)
			if resp.Stop != llm.StopToolUse {
				if i > 1 && resp.Message.Text() != "You said: "+prompt {
					t.Fatalf("prompt %d answered %q", i, resp.Message.Text())
				}
				break
			}
			calls++
			if calls > 1 {
				t.Fatalf("prompt %d: more than one tool round", i)
			}
			for _, c := range resp.Message.ToolCalls() {
				msgs = append(msgs, toolResult(c.ID, "hello from zot\nREADME.md"))
			}
		}
		if i == 1 && calls != 1 {
			t.Fatalf("the first prompt made %d tool rounds, want 1", calls)
		}
	}
	for _, k := range []llm.EventKind{llm.EventStart, llm.EventThinkingDelta, llm.EventTextDelta,
		llm.EventToolStart, llm.EventToolArgsDelta, llm.EventToolEnd} {
		if seen[k] == 0 {
			t.Errorf("event kind %d never reported", k)
		}
	}
	if seen[llm.EventStart] != 101 {
		t.Errorf("%d starts for 101 calls", seen[llm.EventStart])
	}
}
