package models

import "zot.dev/zot/internal/llm"

// deepseekModels are DeepSeek's API models (the "deepseek" provider, which
// speaks Chat Completions).
//
// Source: DeepSeek's Models & Pricing page
// (api-docs.deepseek.com/quick_start/pricing), the version checked on
// 2026-11-15 as the search index holds it, read 2026-11-23. DeepSeek bills
// peak hours (01:00-04:00 and 06:00-10:00 UTC on weekdays) at twice the
// off-peak rate; the catalog holds the peak rate, so calls off peak cost
// half what zot reports. A cache miss is billed as input and there is no
// separate write charge, so CacheWrite is 0. Both models think by default
// (thinking {type:"disabled"} turns it off) and take reasoning_effort.
var deepseekModels = []Model{
	{
		// DeepSeek-V4.1-Flash; reads images.
		ID: "deepseek-flash", Provider: "deepseek", Name: "DeepSeek Flash (V4.1)",
		ContextWindow: 1_048_576, MaxOutput: 393_216, Reasoning: true, Images: true,
		Input: 0.30, Output: 1.20, CacheRead: 0.006,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
	{
		// DeepSeek-V4-Pro-0813; text only.
		ID: "deepseek-v4-pro", Provider: "deepseek", Name: "DeepSeek V4 Pro",
		ContextWindow: 1_048_576, MaxOutput: 393_216, Reasoning: true,
		Input: 1.32, Output: 3.96, CacheRead: 0.044,
		ReasoningControl: llm.ReasoningEffort, AlwaysReasons: true,
	},
}

// deepseekAliases are retired ids and the model that now answers them:
// DeepSeek serves deepseek-v4-flash (and its vision preview) with V4.1
// Flash at Flash prices, and retired deepseek-chat and deepseek-reasoner on
// 2026-07-24. zot sends the successor's id.
var deepseekAliases = []alias{
	{provider: "deepseek", id: "deepseek-v4-flash", to: "deepseek-flash", retired: true},
	{provider: "deepseek", id: "deepseek-v4-flash-vision-exp", to: "deepseek-flash", retired: true},
	{provider: "deepseek", id: "deepseek-chat", to: "deepseek-flash", retired: true},
	{provider: "deepseek", id: "deepseek-reasoner", to: "deepseek-flash", retired: true},
}
