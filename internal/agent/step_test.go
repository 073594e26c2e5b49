package agent

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestDecide pins the loop's decisions after a step, one per way a step
// ends.
func TestDecide(t *testing.T) {
	cases := []struct {
		name string
		o    Outcome
		want Decision
	}{
		{"answer", Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopEndTurn}, Decision{Action: ActionEnd, Stop: wire.StopEndTurn, Steerable: true}},
		{"answer at the limit", Outcome{Step: 5, MaxSteps: 5, Stop: wire.StopEndTurn}, Decision{Action: ActionEnd, Stop: wire.StopEndTurn}},
		{"cut answer", Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopLength, Reason: "r"}, Decision{Action: ActionEnd, Stop: wire.StopLength, Reason: "r", Steerable: true}},
		{"refusal", Outcome{Step: 2, MaxSteps: 5, Stop: wire.StopRefusal, Reason: "no", Calls: 1}, Decision{Action: ActionRefuse, Stop: wire.StopRefusal, Reason: "no"}},
		{"tools", Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopEndTurn, Calls: 2}, Decision{Action: ActionRunTools, Stop: wire.StopToolUse}},
		{"tools cut", Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopLength, Calls: 1}, Decision{Action: ActionAnswerUnrun, Stop: wire.StopLength, Reason: lengthWithCallsReason}},
		{"tools cut with a reason", Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopLength, Reason: "max_tokens", Calls: 1}, Decision{Action: ActionAnswerUnrun, Stop: wire.StopLength, Reason: "max_tokens"}},
		{"budget spent", Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopEndTurn, Calls: 1, OverBudget: "spent"}, Decision{Action: ActionAnswerUnrun, Stop: wire.StopMaxCost, Reason: "spent"}},
	}
	for _, c := range cases {
		if got := Decide(c.o); got != c.want {
			t.Errorf("%s: Decide(%+v) = %+v, want %+v", c.name, c.o, got, c.want)
		}
	}
	d := Decide(Outcome{Step: 1, MaxSteps: 5, Stop: wire.StopEndTurn, Empty: "nothing"})
	if d.Action != ActionFail || d.Stop != wire.StopError || d.Err == nil || d.Err.Code != wire.CodeProviderError || d.Err.Message != "nothing" {
		t.Errorf("empty answer: got %+v (err %v), want a provider_error failure", d, d.Err)
	}
	if err := AfterTools(4, 5); err != nil {
		t.Errorf("AfterTools below the limit = %v, want nil", err)
	}
	if err := AfterTools(5, 5); err == nil || err.Code != wire.CodeMaxSteps {
		t.Errorf("AfterTools at the limit = %v, want max_steps", err)
	}
}
