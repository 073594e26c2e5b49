package models

import "zot.dev/zot/internal/llm"

// anthropicModels are the Claude models of the Messages API.
//
// Sources, read 2026-11-23 unless a line says otherwise: the model ids
// against the Model type of @anthropic-ai/sdk 1.14.0
// (resources/messages/messages.d.ts, re-read 2026-11-27); prices from
// Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing)
// and context windows, output limits and thinking modes from the model
// pages (platform.claude.com/docs/en/models/*/overview), as the search
// index holds them. Anthropic bills cache writes by lifetime; CacheWrite is
// the 5-minute write price, the lifetime zot's provider asks for.
//
// How each model reasons (the levels it takes, whether its thinking is
// bound to the conversation) comes from the family rules (family.go)
// unless an entry says otherwise; ThinksByDefault marks the models whose
// page says thinking is on by default with the display omitted.
//
// Every Claude 5 model takes only adaptive thinking (thinking
// {type:"adaptive"} with output_config.effort); a budget is refused with a
// 400. Haiku 4.5 is the last model that takes only a budget. Models whose
// page says "Adaptive (always on)" think on every call.
var anthropicModels = []Model{
	{
		// Released 2026-11-09. The price is what resellers list as
		// Anthropic's (docs.laozhang.ai, 2026-11-10); Anthropic's own page
		// for it was not in what we could read. 1M/128K from the same and
		// runware.ai's model page.
		ID: "claude-fable-5-2", Provider: "anthropic", Name: "Claude Fable 5.2",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 8, Output: 40, CacheRead: 0.20, CacheWrite: 10,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// Limited availability; the SDK's Model type names it beside
		// Fable 5.2. Its price is not on the pricing page as read
		// (2026-11-27): Fable 5.2's is assumed, as Mythos 5.1 and 5 cost
		// what Fable 5.1 and 5 cost there. Always reasons like Fable.
		ID: "claude-mythos-5-2", Provider: "anthropic", Name: "Claude Mythos 5.2",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 8, Output: 40, CacheRead: 0.20, CacheWrite: 10,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// Pricing page (platform.claude.com/docs/en/about-claude/pricing,
		// read 2026-11-27): "Claude Mythos 5.1 (limited availability)"
		// $10 / $12.50 / $0.25 / $50, as Fable 5.1.
		ID: "claude-mythos-5-1", Provider: "anthropic", Name: "Claude Mythos 5.1",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 10, Output: 50, CacheRead: 0.25, CacheWrite: 12.50,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// Pricing page: $10 / $12.50 / $0.25 / $50; "Adaptive (always on)".
		ID: "claude-fable-5-1", Provider: "anthropic", Name: "Claude Fable 5.1",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 10, Output: 50, CacheRead: 0.25, CacheWrite: 12.50,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// $4 / $20, 5m write $5, hits $0.20 (0.05x input); "Adaptive
		// (always on)" in the Opus 5 page's lineup table.
		ID: "claude-opus-5-5", Provider: "anthropic", Name: "Claude Opus 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 4, Output: 20, CacheRead: 0.20, CacheWrite: 5,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// Cache reads cut from $0.20 to $0.10 on 2026-10-07 (pricing-tool
		// release notes checked against the live page on 2026-10-24; the
		// model page in the index still shows $0.20).
		ID: "claude-sonnet-5-5", Provider: "anthropic", Name: "Claude Sonnet 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.50,
		ReasoningControl: llm.ReasoningEffort, ThinksByDefault: true,
	},
	{
		// Two bands by prompt size; this is the band up to 100,000 tokens
		// (longer prompts: $0.50 / $2.50 / $0.05 / $0.625).
		ID: "claude-haiku-5-5", Provider: "anthropic", Name: "Claude Haiku 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.125,
		ReasoningControl: llm.ReasoningEffort, ThinksByDefault: true,
	},
	{
		// Legacy (successor claude-fable-5-1), still served. The first
		// model whose adaptive thinking cannot be turned off.
		ID: "claude-fable-5", Provider: "anthropic", Name: "Claude Fable 5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 10, Output: 50, CacheRead: 1, CacheWrite: 12.50,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// Legacy (successor claude-opus-5-5), retirement not before
		// 2027-07-24. Thinking is on by default.
		ID: "claude-opus-5", Provider: "anthropic", Name: "Claude Opus 5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		ID: "claude-sonnet-5", Provider: "anthropic", Name: "Claude Sonnet 5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50,
		ReasoningControl: llm.ReasoningEffort, ThinksByDefault: true,
	},
	{
		// Opus 4.6 to 4.8 share one price on the pricing page. 4.7 and 4.8
		// take only adaptive thinking; 4.6 still takes a budget but the SDK
		// warns that it is deprecated there, so adaptive it is.
		ID: "claude-opus-4-8", Provider: "anthropic", Name: "Claude Opus 4.8",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		ID: "claude-opus-4-7", Provider: "anthropic", Name: "Claude Opus 4.7",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		ID: "claude-opus-4-6", Provider: "anthropic", Name: "Claude Opus 4.6",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// $3 / $15 / $0.30 / $3.75, 1M context and 64K output.
		ID: "claude-sonnet-4-6", Provider: "anthropic", Name: "Claude Sonnet 4.6",
		ContextWindow: 1_000_000, MaxOutput: 64_000, Reasoning: true, Images: true,
		Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// Extended thinking only (a budget); the dated id
		// claude-haiku-4-5-20251001 names the same model.
		ID: "claude-haiku-4-5", Provider: "anthropic", Name: "Claude Haiku 4.5",
		ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true, Images: true,
		Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25,
		ReasoningControl: llm.ReasoningBudget,
	},
	{
		// Still served until its deprecation date. Pricing page (read
		// 2026-11-27): $5 / $6.25 / $0.50 / $25; 200K context, 64K output.
		// Extended thinking with a budget only.
		ID: "claude-opus-4-5", Provider: "anthropic", Name: "Claude Opus 4.5",
		ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true, Images: true,
		Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25,
		ReasoningControl: llm.ReasoningBudget,
	},
	{
		// Still served until its deprecation date. "Sonnet (other)" on the
		// pricing page: $3 / $3.75 / $0.30 / $15; 200K context, 64K output.
		// Extended thinking with a budget only.
		ID: "claude-sonnet-4-5", Provider: "anthropic", Name: "Claude Sonnet 4.5",
		ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true, Images: true,
		Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75,
		ReasoningControl: llm.ReasoningBudget,
	},
}

// anthropicAliases are ids that name a model of the list: dated snapshots,
// which are sent as given.
var anthropicAliases = []alias{
	{provider: "anthropic", id: "claude-haiku-4-5-20251001", to: "claude-haiku-4-5"},
	{provider: "anthropic", id: "claude-opus-4-5-20251101", to: "claude-opus-4-5"},
	{provider: "anthropic", id: "claude-sonnet-4-5-20250929", to: "claude-sonnet-4-5"},
}
