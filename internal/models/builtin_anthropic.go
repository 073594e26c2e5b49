package models

// anthropicModels are the current (5.5 / Fable 5.1) and previous (5 /
// Fable 5 / Haiku 4.5) generations of Claude.
//
// Source: Anthropic's model overview and pricing pages
// (platform.claude.com/docs/en/models/*/overview, .../about-claude/pricing)
// as published by late October 2026, unless a line says otherwise.
// Anthropic bills cache writes by lifetime; CacheWrite is the 5-minute write
// price, the lifetime zot's Anthropic provider asks for. Claude Haiku 5.5 is priced in
// two bands by prompt size; the catalog holds the band for prompts up to
// 100,000 tokens, so longer prompts cost more than zot reports.
var anthropicModels = []Model{
	{
		ID: "claude-fable-5-1", Provider: "anthropic", Name: "Claude Fable 5.1",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 10, Output: 50, CacheRead: 0.25, CacheWrite: 12.50,
	},
	{
		ID: "claude-opus-5-5", Provider: "anthropic", Name: "Claude Opus 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 4, Output: 20, CacheRead: 0.20, CacheWrite: 5,
	},
	{
		// Cache reads were cut from $0.20 to $0.10 on 2026-10-07 (release
		// notes of pricing tools checked against the live page on
		// 2026-10-24; the model overview we could read still showed $0.20).
		ID: "claude-sonnet-5-5", Provider: "anthropic", Name: "Claude Sonnet 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.50,
	},
	{
		ID: "claude-haiku-5-5", Provider: "anthropic", Name: "Claude Haiku 5.5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.125,
	},
	{
		ID: "claude-fable-5", Provider: "anthropic", Name: "Claude Fable 5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 10, Output: 50, CacheRead: 1, CacheWrite: 12.50,
	},
	{
		ID: "claude-opus-5", Provider: "anthropic", Name: "Claude Opus 5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25,
	},
	{
		ID: "claude-sonnet-5", Provider: "anthropic", Name: "Claude Sonnet 5",
		ContextWindow: 1_000_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50,
	},
	{
		ID: "claude-haiku-4-5", Provider: "anthropic", Name: "Claude Haiku 4.5",
		ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true, Images: true,
		Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25,
	},
}
