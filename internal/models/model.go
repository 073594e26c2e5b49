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
	"math"

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
}

// Describe copies what providers need to know of m into req: whether it
// reasons and how its reasoning is set, and its output limit.
func (m Model) Describe(req *llm.Request) {
	req.ReasoningModel = m.Reasoning
	req.ReasoningControl = m.ReasoningControl
	req.AlwaysReasons = m.AlwaysReasons
	req.MaxOutput = m.MaxOutput
	req.NoChatToolsReasoning = m.NoChatToolsReasoning
}

// The facts [Catalog.Resolve] gives a model id the catalog does not know.
// Prices of unknown models are zero: zot never guesses a price.
const (
	DefaultContextWindow = 128_000
	DefaultMaxOutput     = 8_192
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
