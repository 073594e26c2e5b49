package engine

import (
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// TestResultCountsAStepMadeAgainOnce: a step whose model call was made
// again (its second turn_start carries the attempt) is one turn of the
// prompt's record, whose text is the answer that finished.
func TestResultCountsAStepMadeAgainOnce(t *testing.T) {
	tl := &tally{start: time.Now()}
	two := int64(2)
	for _, ev := range []wire.Event{
		&wire.TurnStartEvent{Step: 1},
		&wire.TextDeltaEvent{Delta: "Hel"},
		&wire.TurnStartEvent{Step: 1, Attempt: &two},
		&wire.TextDeltaEvent{Delta: "Hi there"},
		&wire.UsageEvent{Input: 10, Output: 5},
		&wire.AssistantMessageEvent{Content: wire.ContentBlocks{&wire.TextBlock{Text: "Hi there"}}},
		&wire.TurnEndEvent{Stop: wire.StopEndTurn},
	} {
		tl.see(ev)
	}
	r := tl.result()
	if r.Turns != 1 || r.Text != "Hi there" || r.Usage.Input != 10 || r.Stop != wire.StopEndTurn {
		t.Errorf("record: %d turns, text %q, %d in, stop %s; want 1 turn, %q, 10 in, end_turn", r.Turns, r.Text, r.Usage.Input, r.Stop, "Hi there")
	}
}
