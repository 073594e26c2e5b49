package models

import (
	"slices"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// TestFamilyRules: ids the catalog does not know get what their family's
// rules say (docs/providers.md, "Model ids the catalog does not know"),
// and are unpriced.
func TestFamilyRules(t *testing.T) {
	c := Builtin()
	for _, tc := range []struct {
		provider, id string
		control      llm.ReasoningControl
		responses    bool // tools with reasoning need the Responses API
		bound        bool
		efforts      string
		maxOutput    int
	}{
		// Claude 4.5 and earlier: a budget only (adaptive thinking and
		// output_config.effort are refused).
		{"anthropic", "claude-opus-4-1", llm.ReasoningBudget, false, false, "none low medium high", 64_000},
		{"anthropic", "claude-sonnet-4-5-20991231", llm.ReasoningBudget, false, false, "none low medium high", 64_000},
		{"anthropic", "claude-3-7-sonnet-latest", llm.ReasoningBudget, false, false, "none low medium high", 64_000},
		{"anthropic", "claude-3-5-haiku-latest", "", false, false, "", 8_192},
		// Claude Opus 4.6 and later, Claude 5: adaptive thinking and
		// effort; 5.1 and later bind thinking to the conversation.
		{"anthropic", "claude-opus-4-9", llm.ReasoningEffort, false, false, "none low medium high xhigh max", 128_000},
		{"anthropic", "claude-haiku-5", llm.ReasoningEffort, false, false, "none low medium high xhigh max", 128_000},
		{"anthropic", "claude-sonnet-5-6", llm.ReasoningEffort, false, true, "none low medium high xhigh max", 128_000},
		{"anthropic", "claude-fable-6", llm.ReasoningEffort, false, true, "none low medium high xhigh max", 128_000},
		// GPT-5.6 and later: Responses for tools with reasoning; 6.1 Sol and
		// 6.2 on refuse "none".
		{"openai", "gpt-5.6-nova", llm.ReasoningEffort, true, false, "none low medium high xhigh max", 128_000},
		{"openai-responses", "gpt-6-terra", llm.ReasoningEffort, true, false, "none low medium high xhigh max", 128_000},
		{"openai", "gpt-6.1-sol-2026-12-01", llm.ReasoningEffort, true, false, "low medium high xhigh max", 128_000},
		{"openai", "gpt-6.3-luna", llm.ReasoningEffort, true, false, "low medium high xhigh max", 128_000},
		{"openai", "gpt-6-astra-2026-09-03", llm.ReasoningEffort, true, false, "low medium high xhigh max", 128_000},
		{"openai", "gpt-6-luna-2026-09-22", llm.ReasoningEffort, true, false, "none low medium high xhigh max", 128_000},
		{"openai", "gpt-7", llm.ReasoningEffort, true, false, "low medium high xhigh max", 128_000},
		{"openai", "gpt-5.3-codex", llm.ReasoningEffort, false, false, "none low medium high xhigh", 128_000},
		{"openai", "gpt-5-pro", llm.ReasoningEffort, false, false, "minimal low medium high", 128_000},
		{"openai", "o5-mini", llm.ReasoningEffort, false, false, "low medium high", 100_000},
		{"openai", "gpt-4o", "", false, false, "", 16_384},
		// Gemini 2.x: a budget; 3 and later: thinkingLevel.
		{"gemini", "gemini-2.0-flash-thinking", llm.ReasoningBudget, false, false, "none low medium high", 65_536},
		// A Pro model of 2.x cannot turn its thinking off.
		{"gemini", "gemini-2.5-pro-preview-06-05", llm.ReasoningBudget, false, false, "low medium high", 65_536},
		{"gemini", "gemini-3.9-flash", llm.ReasoningEffort, false, false, "minimal low medium high", 65_536},
		{"google", "gemini-4-xenon", llm.ReasoningEffort, false, false, "low medium high xhigh", 65_536},
		{"gemini", "gemini-1.5-pro", "", false, false, "", 8_192},
	} {
		m := c.Resolve(tc.provider, tc.id)
		if _, known := c.Lookup(tc.provider, tc.id); known {
			t.Fatalf("%s is in the catalog; pick an id that is not", tc.id)
		}
		got := strings.Join(m.EffortLevels(), " ")
		if m.ReasoningControl != tc.control || m.NoChatToolsReasoning != tc.responses || m.BoundThinking != tc.bound ||
			got != tc.efforts || m.MaxOutput != tc.maxOutput || !m.Unpriced || m.Reasoning != (tc.control != "") {
			t.Errorf("%s/%s: %+v (levels %q)", tc.provider, tc.id, m, got)
		}
	}
	// An id no rule places: a plain model with unknown limits and prices.
	m := c.Resolve("openai", "llama-3.3-70b")
	if m.ReasoningControl != "" || m.MaxOutput != 0 || !m.Unpriced || m.Input != 0 {
		t.Errorf("unplaced id: %+v", m)
	}
}

// TestBuiltinFamilyFacts: the built-in models get the family's facts
// where their entry says nothing, and the current models the vendors name are there.
func TestBuiltinFamilyFacts(t *testing.T) {
	c := Builtin()
	bound := []string{"claude-fable-5-2", "claude-mythos-5-2", "claude-fable-5-1", "claude-mythos-5-1", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"}
	for _, id := range bound {
		if m, ok := c.Lookup("anthropic", id); !ok || !m.BoundThinking {
			t.Errorf("%s: bound thinking %v (known %v)", id, m.BoundThinking, ok)
		}
	}
	for _, id := range []string{"claude-opus-5", "claude-sonnet-5", "claude-fable-5", "claude-opus-4-5", "claude-haiku-4-5"} {
		if m, _ := c.Lookup("anthropic", id); m.BoundThinking {
			t.Errorf("%s: bound thinking", id)
		}
	}
	for _, id := range []string{"claude-opus-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929"} {
		if m, ok := c.Lookup("anthropic", id); !ok || m.ReasoningControl != llm.ReasoningBudget {
			t.Errorf("%s: %+v, %v", id, m, ok)
		}
	}
	for _, id := range []string{"claude-sonnet-5-5", "claude-haiku-5-5", "claude-sonnet-5"} {
		if m, _ := c.Lookup("anthropic", id); !m.ThinksByDefault {
			t.Errorf("%s thinks by default (display omitted)", id)
		}
	}
	for _, id := range []string{"gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna"} {
		if m, ok := c.Lookup("openai", id); !ok || !m.NoChatToolsReasoning || m.CacheWrite == 0 {
			t.Errorf("%s: %+v", id, m)
		}
	}
	for _, id := range []string{"gpt-5.5", "gpt-5.4", "gpt-5.2", "gpt-5.1"} {
		if _, ok := c.Lookup("openai", id); !ok {
			t.Errorf("%s missing", id)
		}
	}
	for _, id := range []string{"gemini-4-neon", "gemini-4-hydrogen"} {
		if _, ok := c.Lookup("gemini", id); !ok {
			t.Errorf("%s missing", id)
		}
	}
	if m, _ := c.Lookup("openai", "gpt-6.1-sol"); slices.Contains(m.EffortLevels(), "none") {
		t.Errorf("gpt-6.1-sol takes none: %v", m.EffortLevels())
	}
	if m, _ := c.Lookup("anthropic", "claude-opus-5-5"); slices.Contains(m.EffortLevels(), "none") {
		t.Errorf("an always-reasoning model takes none: %v", m.EffortLevels())
	}
}

// TestPriceChanges: Gemini 4 Argon and Carbon end their introductory
// prices on 2026-12-01; a call is priced at the prices of its day.
func TestPriceChanges(t *testing.T) {
	c := Builtin()
	for _, id := range []string{"gemini-4-argon", "gemini-4-carbon"} {
		m, _ := c.Lookup("gemini", id)
		before := m.At(time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC))
		after := m.At(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		if before.Input != 2 || before.Output != 10 || before.CacheRead != 0.10 {
			t.Errorf("%s before: %+v", id, before)
		}
		if after.Input != 4 || after.Output != 20 || after.CacheRead != 0.20 {
			t.Errorf("%s after: %+v", id, after)
		}
		u := llm.Usage{Input: 1_000_000, Output: 1_000_000}
		if b, a := before.Cost(u), after.Cost(u); b != 12 || a != 24 {
			t.Errorf("%s cost %v then %v", id, b, a)
		}
	}
}

// TestTakesEffort: a level a model does not take is refused with the
// levels it takes.
func TestTakesEffort(t *testing.T) {
	c := Builtin()
	sol, _ := c.Lookup("openai", "gpt-6.1-sol")
	err := sol.TakesEffort("none")
	if err == nil || !strings.Contains(err.Error(), "low, medium, high, xhigh, max") {
		t.Errorf("gpt-6.1-sol none: %v", err)
	}
	if err := sol.TakesEffort("max"); err != nil {
		t.Error(err)
	}
	if err := sol.TakesEffort("extreme"); err == nil || !strings.Contains(err.Error(), "none, minimal, low, medium, high, xhigh, max") {
		t.Errorf("unknown level: %v", err)
	}
	haiku, _ := c.Lookup("anthropic", "claude-haiku-4-5")
	if err := haiku.TakesEffort("max"); err == nil || !strings.Contains(err.Error(), "none, low, medium, high") {
		t.Errorf("haiku 4.5 max: %v", err)
	}
	g41, _ := c.Lookup("openai", "gpt-4.1")
	if err := g41.TakesEffort("low"); err == nil {
		t.Error("gpt-4.1 takes a reasoning level")
	}
}
