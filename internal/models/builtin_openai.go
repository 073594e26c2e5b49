package models

import "zot.dev/zot/internal/llm"

// openaiModels serve both "openai" (Chat Completions) and "openai-responses"
// (Responses): the two APIs share model ids and prices.
//
// Sources: OpenAI's model pages and pricing page
// (developers.openai.com/api/docs/models/*, .../api/docs/pricing), and the
// ChatModel and ResponsesModel lists of the openai npm package 7.57.0
// (resources/shared.d.ts, released 2026-11-13, the newest release on
// 2026-11-27), which name every id below except GPT-6.2 (released after
// it). Prices are the Standard tier for
// prompts up to 272,000 input tokens; the GPT-6 family bills longer prompts
// at higher rates, which zot does not model. From GPT-5.6 on, OpenAI bills
// cache writes (1.25x input); older models have no write charge, so their
// CacheWrite is 0. Re-checked 2026-11-23 against what the search index
// holds of those pages and of the pricing notes of tools that track them;
// each line says what it rests on.
//
// From GPT-5.6 on, Chat Completions refuses function tools unless
// reasoning_effort is "none" (its 400 says to use /v1/responses or "none"),
// so those models carry NoChatToolsReasoning.
var openaiModels = []Model{
	// GPT-6.2, released 2026-11-17. Astra's cached-input price is "60%
	// below GPT-6 Astra's $1" per the launch notes of 2026-11-18; its cache
	// write price is not published where we could read it and is taken as
	// 1.25x input, OpenAI's rule since GPT-5.6.
	{
		ID: "gpt-6.2-astra", Provider: "openai", Name: "GPT-6.2 Astra",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 8, Output: 40, CacheRead: 0.40, CacheWrite: 10,
	},
	{
		// Input and output confirmed for 2026-11-18; the cache prices could
		// not be confirmed and are GPT-6.1 Sol's (as of 2026-10-13).
		ID: "gpt-6.2-sol", Provider: "openai", Name: "GPT-6.2 Sol",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.50,
	},
	// GPT-6.1 (Sol 2026-09-29, Terra 2026-10-26) and GPT-6 (Astra
	// 2026-09-03, Sol and Luna 2026-09-22). Sol 6.1: $2 / $10, cache reads
	// $0.10, writes $2.50 (APIYI's launch note, PromptFuel 1.0.22); Terra
	// 6.1: $1 / $5 / $0.05 / $1.25 (OpenAI's Terra page as quoted by
	// apidog, PromptFuel 1.0.24, 2026-10-27); GPT-6 Astra $10 / $50 / $1 /
	// $12.50 and Sol and Luna as listed (codexometer 0.18.4, OpenAI's prices
	// of 2026-09-22). Context 1,050,000 tokens, of which at most 922,000
	// input.
	{
		ID: "gpt-6.1-sol", Provider: "openai", Name: "GPT-6.1 Sol",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.50,
	},
	{
		ID: "gpt-6.1-terra", Provider: "openai", Name: "GPT-6.1 Terra",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 1, Output: 5, CacheRead: 0.05, CacheWrite: 1.25,
	},
	{
		ID: "gpt-6-astra", Provider: "openai", Name: "GPT-6 Astra",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 10, Output: 50, CacheRead: 1, CacheWrite: 12.50,
	},
	{
		ID: "gpt-6-sol", Provider: "openai", Name: "GPT-6 Sol",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50,
	},
	{
		ID: "gpt-6-luna", Provider: "openai", Name: "GPT-6 Luna",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.125,
	},
	// GPT-5.6 (2026-07-09). Prices from LaoZhang's note of OpenAI's price
	// cut of 2026-07-30 (docs.laozhang.ai/en/announcements/
	// gpt-5-6-pricing-2026-07, verified there 2026-08-01) and PromptFuel
	// 1.0.19: Sol $5 / $30 / $0.50 (unchanged), Terra $2 / $12 / $0.20,
	// Luna $0.20 / $1.20 / $0.02; cache writes 1.25x input, OpenAI's rule
	// since GPT-5.6. Context 1,050,000, 128K output (apidog's GPT-5.6 guide).
	{
		ID: "gpt-5.6-sol", Provider: "openai", Name: "GPT-5.6 Sol",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 5, Output: 30, CacheRead: 0.50, CacheWrite: 6.25,
	},
	{
		ID: "gpt-5.6-terra", Provider: "openai", Name: "GPT-5.6 Terra",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 2, Output: 12, CacheRead: 0.20, CacheWrite: 2.50,
	},
	{
		ID: "gpt-5.6-luna", Provider: "openai", Name: "GPT-5.6 Luna",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort, NoChatToolsReasoning: true,
		Input: 0.20, Output: 1.20, CacheRead: 0.02, CacheWrite: 0.25,
	},
	// GPT-5.5 (2026-04-23) and GPT-5.4: OpenAI's pricing page as quoted by
	// TokenMix (verified 2026-06-04) and Morph (June 2026): 5.5 $5 / $30 /
	// $0.50, 5.4 $2.50 / $15 / $0.25, 1M context; no cache-write charge.
	// GPT-5.2 (2025-12-11) $1.75 / $14 / $0.175 and GPT-5.1 (2025-11-13)
	// $1.25 / $10 / $0.125, 400K context, 128K output, as upstream zot's
	// catalog and OpenAI's launch prices have them.
	{
		ID: "gpt-5.5", Provider: "openai", Name: "GPT-5.5",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            5, Output: 30, CacheRead: 0.50,
	},
	{
		ID: "gpt-5.4", Provider: "openai", Name: "GPT-5.4",
		ContextWindow: 1_050_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            2.50, Output: 15, CacheRead: 0.25,
	},
	{
		ID: "gpt-5.2", Provider: "openai", Name: "GPT-5.2",
		ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            1.75, Output: 14, CacheRead: 0.175,
	},
	{
		ID: "gpt-5.1", Provider: "openai", Name: "GPT-5.1",
		ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            1.25, Output: 10, CacheRead: 0.125,
	},
	// GPT-5 (August 2025). gpt-5-nano confirmed on its model page in 2026;
	// gpt-5 and gpt-5-mini are the prices OpenAI has published since launch
	// (last confirmed March 2026).
	{
		ID: "gpt-5", Provider: "openai", Name: "GPT-5",
		ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            1.25, Output: 10, CacheRead: 0.125,
	},
	{
		ID: "gpt-5-mini", Provider: "openai", Name: "GPT-5 mini",
		ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            0.25, Output: 2, CacheRead: 0.025,
	},
	{
		ID: "gpt-5-nano", Provider: "openai", Name: "GPT-5 nano",
		ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            0.05, Output: 0.40, CacheRead: 0.005,
	},
	// GPT-4.1 (April 2025), last confirmed March 2026. Not a reasoning model.
	{
		ID: "gpt-4.1", Provider: "openai", Name: "GPT-4.1",
		ContextWindow: 1_047_576, MaxOutput: 32_768, Images: true,
		Input: 2, Output: 8, CacheRead: 0.50,
	},
	{
		ID: "gpt-4.1-mini", Provider: "openai", Name: "GPT-4.1 mini",
		ContextWindow: 1_047_576, MaxOutput: 32_768, Images: true,
		Input: 0.40, Output: 1.60, CacheRead: 0.10,
	},
	{
		ID: "gpt-4.1-nano", Provider: "openai", Name: "GPT-4.1 nano",
		ContextWindow: 1_047_576, MaxOutput: 32_768, Images: true,
		Input: 0.10, Output: 0.40, CacheRead: 0.025,
	},
	// o-series reasoning models (April 2025; o3 repriced June 2025), last
	// confirmed March 2026.
	{
		ID: "o3", Provider: "openai", Name: "o3",
		ContextWindow: 200_000, MaxOutput: 100_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            2, Output: 8, CacheRead: 0.50,
	},
	{
		ID: "o4-mini", Provider: "openai", Name: "o4-mini",
		ContextWindow: 200_000, MaxOutput: 100_000, Reasoning: true, Images: true,
		ReasoningControl: llm.ReasoningEffort,
		Input:            1.10, Output: 4.40, CacheRead: 0.275,
	},
}
