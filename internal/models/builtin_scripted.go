package models

// scriptedModels is the model of zot's offline "scripted" provider. Its
// prices are MADE UP: nothing is billed, but nonzero prices make cost
// accounting visible in demos and tests.
var scriptedModels = []Model{
	{
		ID: "scripted", Provider: "scripted", Name: "Scripted (offline; made-up prices)",
		ContextWindow: 200_000, MaxOutput: 8_192, Reasoning: true, Images: true,
		Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25,
	},
}
