package models

import "zot.dev/zot/internal/llm"

// geminiModels are Google's Gemini 4 and 3.x models and the 2.5
// generation.
//
// Sources: the Gemini API model pages and pricing page
// (ai.google.dev/gemini-api/docs/models/*, .../docs/pricing), as published
// in September and October 2026, and the model list of @google/genai 3.1.0
// (dist/genai.d.ts, type Model_2), which names every id below; Gemini 4
// read 2026-11-23 from the pricing notes of LiteLLM (discussion 46238) and
// LaoZhang (2026-11-11), which quote Google's price. Prices are the paid
// tier for prompts up to 200,000 tokens; Pro models bill longer prompts at
// higher rates, which zot does not model. Gemini's implicit caching has no
// write charge (explicit caches are billed per hour of storage instead), so
// CacheWrite is 0.
//
// Gemini 3 and later set reasoning with thinkingLevel (they refuse
// thinkingBudget); 2.x take thinkingBudget.
var geminiModels = []Model{
	{
		// Introductory prices through 2026-11-30; from 2026-12-01 Google
		// lists $4 input, $20 output and $0.20 cache read. 64K output.
		ID: "gemini-4-argon", Provider: "gemini", Name: "Gemini 4 Argon",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.10,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// Generally available 2026-11-10; Argon's price, context window and
		// request format, and the same change on 2026-12-01.
		ID: "gemini-4-carbon", Provider: "gemini", Name: "Gemini 4 Carbon",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.10,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// Introductory prices through 2026-12-31; from 2027-01-01 Google
		// lists $1.50 input, $7.50 output and $0.15 cache read.
		ID: "gemini-3.8-flash", Provider: "gemini", Name: "Gemini 3.8 Flash",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 0.75, Output: 3.75, CacheRead: 0.075,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		ID: "gemini-3.7-flash", Provider: "gemini", Name: "Gemini 3.7 Flash",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 1.50, Output: 7.50, CacheRead: 0.15,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		ID: "gemini-3.5-flash", Provider: "gemini", Name: "Gemini 3.5 Flash",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 1.50, Output: 9, CacheRead: 0.15,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// The cache-read price is the one resellers list at Google's rate
		// (July 2026); Google's page as read gave input and output only.
		ID: "gemini-3.5-flash-lite", Provider: "gemini", Name: "Gemini 3.5 Flash-Lite",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 0.30, Output: 2.50, CacheRead: 0.03,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		ID: "gemini-3.1-pro-preview", Provider: "gemini", Name: "Gemini 3.1 Pro (preview)",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 2, Output: 12, CacheRead: 0.20,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		ID: "gemini-2.5-pro", Provider: "gemini", Name: "Gemini 2.5 Pro",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 1.25, Output: 10, CacheRead: 0.125,
		ReasoningControl: llm.ReasoningBudget,
	},
	{
		ID: "gemini-2.5-flash", Provider: "gemini", Name: "Gemini 2.5 Flash",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 0.30, Output: 2.50, CacheRead: 0.03,
		ReasoningControl: llm.ReasoningBudget,
	},
	{
		ID: "gemini-2.5-flash-lite", Provider: "gemini", Name: "Gemini 2.5 Flash-Lite",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 0.10, Output: 0.40, CacheRead: 0.01,
		ReasoningControl: llm.ReasoningBudget,
	},
}
