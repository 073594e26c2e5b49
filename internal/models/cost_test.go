package models

import (
	"testing"

	"zot.dev/zot/internal/llm"
)

func TestCostExact(t *testing.T) {
	c := Builtin()
	cases := []struct {
		provider, id string
		u            llm.Usage
		want         float64
	}{
		// 1,234,567×$2 + 89,012×$10 + 3,456,789×$0.10 + 100,000×$2.50, per million.
		{"anthropic", "claude-sonnet-5-5", llm.Usage{Input: 1_234_567, Output: 89_012, CacheRead: 3_456_789, CacheWrite: 100_000}, 3.9549329},
		// One million tokens of each kind costs the sum of the four prices.
		{"anthropic", "claude-opus-5", llm.Usage{Input: 1e6, Output: 1e6, CacheRead: 1e6, CacheWrite: 1e6}, 5 + 25 + 0.50 + 6.25},
		// Prices that are not binary fractions still give the decimal answer.
		{"gemini", "gemini-3.8-flash", llm.Usage{CacheRead: 1000}, 0.000075},
		{"openai", "o4-mini", llm.Usage{Input: 3, Output: 7, CacheRead: 11}, 0.000037125},
		{"openai", "gpt-5-nano", llm.Usage{CacheRead: 1}, 0.000000005},
		{"scripted", "scripted", llm.Usage{Input: 120, Output: 40, CacheRead: 1000, CacheWrite: 800}, 0.00142},
		{"openai", "gpt-6.1-sol", llm.Usage{}, 0},
	}
	for _, tc := range cases {
		m, ok := c.Lookup(tc.provider, tc.id)
		if !ok {
			t.Fatalf("%s/%s missing", tc.provider, tc.id)
		}
		if got := m.Cost(tc.u); got != tc.want {
			t.Errorf("%s %+v: cost %.17g, want %.17g", tc.id, tc.u, got, tc.want)
		}
	}
}

func TestCostUnknownModelIsFree(t *testing.T) {
	m := Builtin().Resolve("openai", "mystery")
	if got := m.Cost(llm.Usage{Input: 1e6, Output: 1e6}); got != 0 {
		t.Errorf("cost = %v", got)
	}
}

func TestCostIgnoresNegativeCounts(t *testing.T) {
	m := Model{Input: 1, Output: 1}
	if got := m.Cost(llm.Usage{Input: -5, Output: 1_000_000}); got != 1 {
		t.Errorf("cost = %v, want 1", got)
	}
}
