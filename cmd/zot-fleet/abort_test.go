package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// slowLong is an answer that streams for some 24 s at 300 ms a word.
var slowLong = strings.Repeat(longText+" ", 4)

// TestFleetAbortAsSubmitted: zot sends a turn's abort right behind its
// submit (a session/cancel that came as the prompt was sent). The abort
// reaches the turn though its workflow had not started when the client
// read it: the turn ends aborted at once, not after its 24 s answer.
func TestFleetAbortAsSubmitted(t *testing.T) {
	f := newFleet(t, slowAnswer(slowLong, 300*time.Millisecond))
	f.worker("w1")
	c := startFrameClient(t, f)
	user, err := sessionfile.EncodeMessage(llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: "count"}}})
	if err != nil {
		t.Fatal(err)
	}
	turn := &fleet.Turn{ID: "zot-abort-as-submitted-1", CWD: f.dir, Provider: "anthropic", Model: "claude-sonnet-4-5",
		Offer: fleet.Offer{System: "You count."}, Transcript: []json.RawMessage{user}, MaxSteps: 10}
	start := time.Now()
	c.send(fleet.Frame{Type: fleet.FrameSubmit, Turn: turn.ID, Input: turn})
	c.send(fleet.Frame{Type: fleet.FrameAbort, Turn: turn.ID, Error: "cancelled by the test"})
	for {
		fr := c.next()
		switch fr.Type {
		case fleet.FrameDone:
			if !fr.Result.Aborted {
				t.Errorf("the turn ended (code %q) after %v, not aborted", fr.Result.Code, time.Since(start))
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the aborted turn took %v to end", took)
			}
			return
		case fleet.FrameError:
			t.Fatalf("the turn failed: %s", fr.Error)
		case fleet.FrameIntercept, fleet.FrameGate:
			c.send(fleet.Frame{Type: fleet.FrameVerdict, Turn: fr.Turn, Request: fr.Request, Verdict: &fleet.ToolVerdict{}})
		}
	}
}
