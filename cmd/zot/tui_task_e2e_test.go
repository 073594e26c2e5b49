//go:build tuie2e

package main

import (
	"strings"
	"testing"
)

// TestTUITaskBlock: a task call is drawn as a block of its sub-agent: its
// steps while it runs, then folded to the count of steps and the first
// lines of its answer; ctrl+o unfolds every step and the whole answer.
func TestTUITaskBlock(t *testing.T) {
	s := scriptFile(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			step{"tool_calls": []any{map[string]any{"id": "t1", "name": "task", "args": map[string]any{"description": "survey the folder", "prompt": "child: survey"}}}},
			step{"text": "The survey is back."},
		}},
		map[string]any{"match": "child:", "steps": []any{
			toolCall("ls", map[string]any{"path": "."}),
			toolCall("bash", map[string]any{"command": "echo second-step-ran"}),
			step{"text": "Answer line one\nanswer line two\nanswer line three\nanswer line four\nanswer line five", "chunk": 4, "delay_ms": 120},
		}},
	}})
	tm := openTerm(t, termOpts{w: 90, h: 30}, "--provider", "scripted", "--script", s, "--permission", "allow")
	tm.waitFor("scripted")
	tm.prompt("survey it")

	// While the sub-agent answers: its steps under the task's title.
	live := tm.waitUntil("the sub-agent's steps while it runs", func(scr string) bool {
		return strings.Contains(scr, "survey the folder") && strings.Contains(scr, "ls .") && strings.Contains(scr, "bash echo second-step-ran")
	})
	if strings.Contains(live, "The survey is back.") {
		t.Fatalf("the parent answered before the sub-agent ended:\n%s", live)
	}
	t.Logf("while it runs:\n%s", live)

	// Done: the count of steps and the answer's first lines, folded.
	done := tm.waitFor("The survey is back.")
	t.Logf("done:\n%s", done)
	if !strings.Contains(done, "2 steps") || !strings.Contains(done, "Answer line one") || !strings.Contains(done, "2 more lines") ||
		strings.Contains(done, "answer line five") || strings.Contains(done, "bash echo second-step-ran") {
		t.Fatalf("the finished task block is not folded to its steps' count and its answer's first lines:\n%s", done)
	}

	// ctrl+o: every step and the whole answer.
	tm.keys("C-o")
	open := tm.waitFor("answer line five")
	t.Logf("unfolded:\n%s", open)
	if !strings.Contains(open, "→ ls .") || !strings.Contains(open, "→ bash echo second-step-ran") || !strings.Contains(open, "answer line four") {
		t.Fatalf("ctrl+o does not show every step and the whole answer:\n%s", open)
	}
	tm.keys("C-o")
	tm.waitFor("!answer line five")
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
