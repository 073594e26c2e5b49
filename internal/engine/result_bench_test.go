package engine

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// shortPrompt is the events of a short prompt: one step answering in 20
// text deltas.
func shortPrompt() []wire.Event {
	evs := []wire.Event{&wire.UserMessageEvent{}, &wire.TurnStartEvent{Step: 1}, &wire.AssistantStartEvent{}}
	for range 20 {
		evs = append(evs, &wire.TextDeltaEvent{Delta: "word "})
	}
	return append(evs,
		&wire.UsageEvent{Input: 1200, Output: 80, CostUSD: 0.0048},
		&wire.AssistantMessageEvent{Content: wire.ContentBlocks{&wire.TextBlock{Text: "twenty words"}}},
		&wire.TurnEndEvent{Stop: wire.StopEndTurn},
	)
}

// BenchmarkPromptResult is what the result record costs a short prompt:
// counting its events as they pass and building the record for its done.
// Compare with BenchmarkPrompt in ./sdk (the whole prompt in process).
func BenchmarkPromptResult(b *testing.B) {
	evs := shortPrompt()
	b.ReportAllocs()
	for b.Loop() {
		t := &tally{}
		for _, ev := range evs {
			t.see(ev)
		}
		if r := t.result(); r.Turns != 1 {
			b.Fatal(r)
		}
	}
}
