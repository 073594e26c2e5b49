package scripted

import "zot.dev/zot/internal/llm"

// position is where a request stands in the script.
type position struct {
	turn, step int
	// prompt is the text of the last user prompt.
	prompt string
}

// locate finds the turn and step for msgs. The turn is the number of user
// prompts (user messages with a text block, compaction summaries excluded)
// minus one; the step is the number of assistant messages after the last
// prompt. Both are capped to the script, so the same transcript always gets
// the same answer.
func locate(s *Script, msgs []llm.Message) position {
	prompts, assistants := 0, 0
	var last string
	for i := range msgs {
		m := &msgs[i]
		switch {
		case isPrompt(m):
			prompts++
			assistants = 0
			last = m.Text()
		case m.Role == llm.RoleAssistant:
			assistants++
		}
	}
	p := position{turn: clamp(prompts-1, len(s.Turns)), prompt: last}
	p.step = clamp(assistants, len(s.Turns[p.turn].Steps))
	return p
}

// isPrompt reports whether m is a user prompt.
func isPrompt(m *llm.Message) bool {
	if m.Role != llm.RoleUser || m.Meta["compaction"] == "true" {
		return false
	}
	for _, b := range m.Content {
		if _, ok := b.(*llm.TextBlock); ok {
			return true
		}
	}
	return false
}

// clamp returns i limited to [0, n-1].
func clamp(i, n int) int {
	return max(0, min(i, n-1))
}
