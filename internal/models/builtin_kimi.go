package models

// kimiModels are the models of the "kimi" provider (Moonshot's Kimi
// coding endpoint, which speaks Chat Completions).
//
// Source: upstream zot's catalog (kimi-for-coding: 262,144-token context,
// 32,000 output tokens, reasoning), read 2026-11-27. Kimi publishes no
// per-token price for this subscription endpoint, so the model is
// unpriced: its cost shows as unknown.
var kimiModels = []Model{
	{
		ID: "kimi-for-coding", Provider: "kimi", Name: "Kimi for Coding",
		ContextWindow: 262_144, MaxOutput: 32_000, Reasoning: true,
		Unpriced: true,
	},
}
