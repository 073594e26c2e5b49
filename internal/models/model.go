// Package models is zot's catalog of model facts: context window, output
// limit, whether a model reasons, whether it reads images, and its prices,
// plus the cost accounting built on those prices.
//
// The built-in catalog covers Anthropic, OpenAI (the "openai" and
// "openai-responses" providers share one list), DeepSeek, Google Gemini
// and zot's offline "scripted" provider. A user file can add models or override
// built-in ones (see [Load]). A model id the catalog does not know is still
// usable: [Catalog.Resolve] gives it stated defaults.
package models

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/registry"
)

// Model describes one model of one provider.
type Model struct {
	// ID is the provider's model id ("claude-sonnet-5-5", "gpt-6.1-sol").
	ID string
	// Provider is the zot provider id ("anthropic", "openai", ...).
	Provider string
	// Name is a human-readable name.
	Name string
	// ContextWindow is the most tokens (input plus output) one call may use.
	ContextWindow int
	// MaxOutput is the most output tokens one call may produce.
	MaxOutput int
	// Reasoning says the model thinks before answering (and, for OpenAI,
	// takes the reasoning-model request parameters).
	Reasoning bool
	// Input, Output, CacheRead and CacheWrite are prices in USD per million
	// tokens of uncached input, output (reasoning included), input read from
	// the prompt cache, and input written to the prompt cache.
	Input, Output, CacheRead, CacheWrite float64
	// Images says the model accepts image input.
	Images bool
	// ReasoningControl is the request parameter that sets the model's
	// reasoning: a token budget or an effort level (see
	// llm.ReasoningControl). Empty for models that take neither and for ids
	// zot cannot place, where the provider decides.
	ReasoningControl llm.ReasoningControl
	// AlwaysReasons says the model reasons on every call and cannot be
	// told not to; its reasoning counts against the output limit.
	AlwaysReasons bool
	// NoChatToolsReasoning says that on OpenAI Chat Completions the model
	// takes function tools only with reasoning off (reasoning_effort
	// "none"); the openai provider then uses the Responses endpoint for it.
	NoChatToolsReasoning bool
	// Efforts are the reasoning levels the model takes (llm.ReasoningLevels
	// order); empty when it takes none; nil leaves the choice to the
	// provider (low, medium and high are passed on).
	Efforts []string
	// ThinksByDefault says the model thinks when the request does not say
	// otherwise (with its thinking hidden unless asked for), so its
	// thinking is shown and counts against the output limit.
	ThinksByDefault bool
	// BoundThinking says the model's thinking blocks are bound to the
	// conversation that produced them: sent back after the system prompt,
	// the tools or an earlier message changed, they fail the request
	// (Anthropic's preserved thinking).
	BoundThinking bool
	// Unpriced says zot knows no prices for the model: its prices are 0
	// and its cost is unknown, not free.
	Unpriced bool
	// Changes are announced price changes, oldest first: from each one's
	// date on, its prices replace the ones above (see [Model.At]).
	Changes []PriceChange
}

// PriceChange is a price change announced by the vendor.
type PriceChange struct {
	// From is the first day (UTC) the prices apply.
	From time.Time
	// Input, Output, CacheRead and CacheWrite are the new prices in USD
	// per million tokens.
	Input, Output, CacheRead, CacheWrite float64
	// Source says where the change was announced and when it was read.
	Source string
}

// At returns m with the prices in force at t: those of the latest change
// that has started by then, else m's own.
func (m Model) At(t time.Time) Model {
	for _, c := range m.Changes {
		if !t.Before(c.From) {
			m.Input, m.Output, m.CacheRead, m.CacheWrite = c.Input, c.Output, c.CacheRead, c.CacheWrite
		}
	}
	return m
}

// TakesEffort reports whether the model takes the reasoning level effort
// ("" always: the provider's default). When it does not, the error lists
// the levels it takes.
func (m Model) TakesEffort(effort string) error {
	if effort == "" {
		return nil
	}
	if !slices.Contains(llm.ReasoningLevels, effort) {
		return fmt.Errorf("reasoning level %q is not one of %s", effort, strings.Join(llm.ReasoningLevels, ", "))
	}
	valid := m.EffortLevels()
	if slices.Contains(valid, effort) {
		return nil
	}
	if len(valid) == 0 {
		return fmt.Errorf("model %s does not take a reasoning level", m.ID)
	}
	return fmt.Errorf("model %s does not take reasoning level %q (it takes %s)", m.ID, effort, strings.Join(valid, ", "))
}

// EffortLevels returns the reasoning levels the model takes: its Efforts
// (without "none" for a model that always reasons), or low, medium and
// high when it names none (an id zot cannot place: the provider decides).
// A model with an empty, non-nil Efforts takes none.
func (m Model) EffortLevels() []string {
	if m.Efforts == nil {
		return []string{"low", "medium", "high"}
	}
	if !m.AlwaysReasons {
		return m.Efforts
	}
	return slices.DeleteFunc(slices.Clone(m.Efforts), func(e string) bool { return e == "none" })
}

// Describe copies what providers need to know of m into req: whether it
// reasons and how its reasoning is set, and its output limit.
func (m Model) Describe(req *llm.Request) {
	req.ReasoningModel = m.Reasoning
	req.ReasoningControl = m.ReasoningControl
	req.AlwaysReasons = m.AlwaysReasons
	req.MaxOutput = m.MaxOutput
	req.NoChatToolsReasoning = m.NoChatToolsReasoning
	req.ThinksByDefault = m.ThinksByDefault
	req.BoundThinking = m.BoundThinking
}

// The facts [Catalog.Resolve] gives a model id the catalog does not know
// and no family rule places. Such a model is unpriced (zot never guesses a
// price) and its output limit is unknown (0).
const (
	DefaultContextWindow = 128_000
	DefaultMaxOutput     = 0
)

// family returns the provider whose model list provider uses (see
// registry.Provider.Family).
func family(provider string) string { return registry.Family(provider) }

// Cost returns what u costs at m's prices, in USD.
//
// Prices are honoured to a millionth of a dollar per million tokens, and the
// sum is formed in whole picodollars before one final division, so the result
// is the float64 nearest to the exact decimal cost (for any call under about
// $9,000).
func (m Model) Cost(u llm.Usage) float64 {
	return float64(m.costPico(u)) / 1e12
}

// costPico returns what u costs in picodollars (1e-12 USD), saturating at
// math.MaxInt64.
func (m Model) costPico(u llm.Usage) int64 {
	var sum int64
	for _, part := range [...]int64{
		pico(u.Input, m.Input),
		pico(u.Output, m.Output),
		pico(u.CacheRead, m.CacheRead),
		pico(u.CacheWrite, m.CacheWrite),
	} {
		sum = addSat(sum, part)
	}
	return sum
}

// pico returns tokens × price-per-million in picodollars: one token at
// $p per million costs p×1e6 picodollars. Non-positive counts and prices
// cost nothing.
func pico(tokens int, price float64) int64 {
	if tokens <= 0 || !(price > 0) {
		return 0
	}
	micro := math.Round(price * 1e6) // picodollars per token
	v := float64(tokens) * micro
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// addSat returns a+b for non-negative a and b, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
