package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// A prompt aborted while it waits for its extensions to start ends as
// any aborted prompt does: turn_start, turn_end{stop:"aborted"}, done,
// whether or not the session has extensions; the model is never called,
// and the next prompt, once they are ready, runs.
func TestExtensionGateAbortKeepsTheTurnShape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slow")
	script := filepath.Join(dir, "run.sh")
	writeExt(t, dir, fmt.Sprintf(`{"name":"slow","exec":"/bin/sh","args":[%q]}`, script), map[string]string{
		"run.sh": "sleep 2\nprintf '%s\\n' '{\"type\":\"hello\",\"name\":\"slow\",\"version\":\"1\"}' '{\"type\":\"ready\"}'\nexec cat >/dev/null\n",
	})
	p := start(t, nil, rpcArgs(t, "--ext", dir)...)
	p.send(`{"id":"1","type":"prompt","message":"hi"}`)
	if r, _ := p.response(); !r.Success {
		t.Fatalf("prompt: %+v", r)
	}
	p.send(`{"id":"2","type":"abort"}`)
	r, evs := p.response()
	if !r.Success {
		t.Fatalf("abort: %+v", r)
	}
	evs = append(evs, p.untilDone()...)
	got := strings.Join(without(types(evs), "ext_notify"), " ")
	if !strings.HasSuffix(got, "user_message turn_start turn_end done") || strings.Contains(got, "assistant") {
		t.Fatalf("events of the prompt aborted at the gate: %s", got)
	}
	for _, ev := range evs {
		if te, ok := ev.(*wire.TurnEndEvent); ok && te.Stop != wire.StopAborted {
			t.Errorf("turn_end stop %q, want aborted", te.Stop)
		}
	}
	p.send(`{"id":"3","type":"prompt","message":"again"}`)
	if r, _ := p.response(); !r.Success {
		t.Fatalf("prompt: %+v", r)
	}
	evs = p.untilDone()
	if got := strings.Join(types(evs), " "); !strings.Contains(got, "assistant_message") {
		t.Errorf("the next prompt: %s", got)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d: %s", code, p.stderr.String())
	}
}
