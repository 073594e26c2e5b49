package providertest

import (
	"testing"

	"zot.dev/zot/internal/llm"
)

// StopReasons checks a provider's stopReason(reason, hasTools) against
// want, which maps each stop reason of the vendor to the stop zot reports
// for an answer without tool calls. It also checks the rules every
// provider shares: a reason it does not know (none, or a new one) ends the
// turn, and an answer with tool calls stops for tool_use whatever the
// reason, except that the output limit and a refusal win (the calls of
// such an answer never run).
func StopReasons(t *testing.T, stopReason func(string, bool) llm.StopReason, want map[string]llm.StopReason) {
	t.Helper()
	all := map[string]llm.StopReason{"": llm.StopEndTurn, "a_reason_not_yet_invented": llm.StopEndTurn}
	for in, w := range want {
		all[in] = w
	}
	for in, w := range all {
		if got := stopReason(in, false); got != w {
			t.Errorf("stopReason(%q, false) = %q, want %q", in, got, w)
		}
		wantTools := llm.StopToolUse
		if w == llm.StopLength || w == llm.StopRefusal {
			wantTools = w
		}
		if got := stopReason(in, true); got != wantTools {
			t.Errorf("stopReason(%q, true) = %q, want %q", in, got, wantTools)
		}
	}
}
