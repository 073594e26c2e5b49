package scripted

import (
	"strings"

	"zot.dev/zot/internal/llm"
)

// position is where a request stands in the script.
type position struct {
	turn, step int
	// prompt is the text of the last user prompt.
	prompt string
}

// locate finds the turn and step for msgs. The turn is the first turn
// whose Match the last user prompt (user messages with a text block,
// compaction summaries excluded) contains; else, among the turns without
// a Match, the number of prompts that matched none, minus one. The step is
// the number of assistant messages after the last prompt. Both are capped
// to the script, so the same transcript always gets the same answer.
func locate(s *Script, msgs []llm.Message) position {
	prompts, assistants := 0, 0
	var last string
	for i := range msgs {
		m := &msgs[i]
		switch {
		case isPrompt(m):
			last = m.Text()
			if matching(s, last) < 0 {
				prompts++
			}
			assistants = 0
		case m.Role == llm.RoleAssistant:
			assistants++
		}
	}
	p := position{prompt: last, turn: matching(s, last)}
	if p.turn < 0 {
		p.turn = ordered(s, prompts-1)
	}
	p.step = clamp(assistants, len(s.Turns[p.turn].Steps))
	return p
}

// matching returns the index of the first turn whose Match text holds,
// or -1.
func matching(s *Script, text string) int {
	for i, t := range s.Turns {
		if t.Match != "" && strings.Contains(text, t.Match) {
			return i
		}
	}
	return -1
}

// ordered returns the index of the n-th turn without a Match (capped to
// the last of them); with none, the last turn.
func ordered(s *Script, n int) int {
	last := -1
	for i, t := range s.Turns {
		if t.Match != "" {
			continue
		}
		last = i
		if n <= 0 {
			return i
		}
		n--
	}
	if last < 0 {
		return len(s.Turns) - 1
	}
	return last
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
