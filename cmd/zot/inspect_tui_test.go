//go:build tuie2e

package main

import (
	"regexp"
	"testing"

	"zot.dev/zot/internal/tap"
)

// zot --inspect ADDR: the terminal client's ACP messages, over its
// in-memory pipe, are on the page, paired and checked, with the model
// call behind them; the address is printed before the screen is drawn.
func TestTUIInspect(t *testing.T) {
	s := answerScript(t, "The answer is forty-two.")
	tm := openTerm(t, termOpts{w: 200, h: 50}, "--provider", "scripted", "--script", s, "--inspect", "127.0.0.1:0")
	tm.waitFor("scripted")
	m := regexp.MustCompile(`inspector at (http://[^/\s]+)/inspect\?token=([0-9a-f]+)`).FindStringSubmatch(tm.scrollback())
	if m == nil {
		t.Fatalf("no inspector address in the terminal:\n%s", tm.scrollback())
	}
	tm.prompt("what is the answer")
	tm.waitFor("The answer is forty-two.")
	snap := snapshotOf(t, m[1], m[2])
	var prompt, answer *tap.Record
	models := 0
	for _, r := range snap.Records {
		switch {
		case r.Method == "session/prompt" && r.Role == "request":
			prompt = r
		case r.Method == "session/prompt" && r.Role == "response":
			answer = r
		case r.Kind == "model":
			models++
		}
	}
	if prompt == nil || answer == nil || answer.Pair != prompt.Seq || prompt.Valid != "ok" || models == 0 {
		t.Fatalf("session/prompt %+v, its answer %+v, %d model calls", prompt, answer, models)
	}
	if len(snap.Connections) != 1 || snap.Connections[0].Transport != "memory" || snap.Connections[0].Label != "terminal" {
		t.Errorf("connections %+v: want the terminal's in-memory pipe", snap.Connections)
	}
	tm.keys("C-d")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("exit status %d after ctrl+d", code)
	}
}
