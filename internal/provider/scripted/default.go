package scripted

import "zot.dev/zot/internal/llm"

// DefaultCommand is the shell command the default script runs with the
// bash tool on the first prompt.
const DefaultCommand = "echo hello from zot && ls"

// Default returns the built-in script, played when no script is given. It
// walks through every kind of event when zot's agent runs it with the
// built-in tools:
//
//   - The first prompt gets two steps. Step one streams a short thinking,
//     a sentence saying what it will do, and a bash tool call running
//     [DefaultCommand] (whose real execution reports tool progress). Step
//     two streams an answer saying the tool ran.
//   - Every later prompt gets one step that echoes it ("You said: ...").
//
// Every step states its usage, with cache reads and writes, so cost
// accounting shows. Each call returns a fresh copy.
func Default() *Script {
	return &Script{Turns: []Turn{
		{Steps: []Step{
			{
				Thinking: "The user wants to see zot at work. Running a small shell command " +
					"shows a tool call, its live output and its result.",
				Text: "I'll run a quick shell command so you can see a tool call at work.",
				ToolCalls: []ToolCall{
					{Name: "bash", Args: `{"command":"` + DefaultCommand + `"}`},
				},
				Usage: &llm.Usage{Input: 1850, Output: 96, CacheWrite: 1600},
			},
			{
				Text: "The bash tool ran: it printed \"hello from zot\" and listed the working " +
					"directory. That was a full round trip: I asked for a tool, zot ran it, and " +
					"its output came back to me.",
				Usage: &llm.Usage{Input: 240, Output: 52, CacheRead: 1850},
			},
		}},
		{Steps: []Step{
			{Echo: true, Usage: &llm.Usage{Input: 60, Output: 24, CacheRead: 2100}},
		}},
	}}
}
