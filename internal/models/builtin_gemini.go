package models

import (
	"time"

	"zot.dev/zot/internal/llm"
)

// gemini4Change is the end of Gemini 4 Argon's and Carbon's introductory
// prices: from 2026-12-01 Google lists $4 input, $20 output and $0.20
// cache read (LiteLLM's and LaoZhang's notes of Google's price,
// 2026-11-11).
var gemini4Change = []PriceChange{{
	From:  time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	Input: 4, Output: 20, CacheRead: 0.20,
	Source: "Google's price as quoted by LiteLLM (discussion 46238) and LaoZhang, 2026-11-11",
}}

// geminiModels are Google's Gemini 4 and 3.x models and the 2.5
// generation.
//
// Sources: the Gemini API model pages and pricing page
// (ai.google.dev/gemini-api/docs/models/*, .../docs/pricing), as published
// in September and October 2026, and the model list of @google/genai 3.3.0
// (dist/genai.d.ts, type Model_2), which names every id below except
// gemini-4-neon (released 2026-11-18, after it); Gemini 4
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
		ReasoningControl: llm.ReasoningEffort, Changes: gemini4Change,
	},
	{
		// Generally available 2026-11-10; Argon's price, context window and
		// request format, and the same change on 2026-12-01.
		ID: "gemini-4-carbon", Provider: "gemini", Name: "Gemini 4 Carbon",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 2, Output: 10, CacheRead: 0.10,
		ReasoningControl: llm.ReasoningEffort, Changes: gemini4Change,
	},
	{
		// Released 2026-11-18 (GA). $3 / $15, cached input $0.15 (implicit
		// caching), 1,048,576 context, 65,536 output, thinking levels low
		// to xhigh: TokenMeter 0.17.0's release notes and LaoZhang's launch
		// note (2026-11-22), both quoting Google's list price; no dated
		// change listed.
		ID: "gemini-4-neon", Provider: "gemini", Name: "Gemini 4 Neon",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 3, Output: 15, CacheRead: 0.15,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// $1.50 / $7.50, cached input $0.075, flat across the 1M context:
		// LiteLLM's launch note (discussion 51436) and TokenMeter 0.17.0;
		// no scheduled change listed.
		ID: "gemini-4-hydrogen", Provider: "gemini", Name: "Gemini 4 Hydrogen",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 1.50, Output: 7.50, CacheRead: 0.075,
		ReasoningControl: llm.ReasoningEffort,
	},
	{
		// Introductory prices through 2026-12-31; from 2027-01-01 Google
		// lists $1.50 input, $7.50 output and $0.15 cache read.
		ID: "gemini-3.8-flash", Provider: "gemini", Name: "Gemini 3.8 Flash",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 0.75, Output: 3.75, CacheRead: 0.075,
		ReasoningControl: llm.ReasoningEffort,
		Changes: []PriceChange{{
			From:  time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
			Input: 1.50, Output: 7.50, CacheRead: 0.15,
			Source: "Google's pricing page as read in October 2026: introductory prices through 2026-12-31",
		}},
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
		// Its thinking cannot be turned off (a budget of 0 is refused).
		ID: "gemini-2.5-pro", Provider: "gemini", Name: "Gemini 2.5 Pro",
		ContextWindow: 1_048_576, MaxOutput: 65_536, Reasoning: true, Images: true,
		Input: 1.25, Output: 10, CacheRead: 0.125,
		ReasoningControl: llm.ReasoningBudget, Efforts: []string{"low", "medium", "high"},
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
