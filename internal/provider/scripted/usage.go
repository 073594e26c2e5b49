package scripted

import "zot.dev/zot/internal/llm"

// estimate returns the usage of a step that states none: a token per four
// bytes, rounded up, of the request (system prompt and transcript) as input
// and of the answer (thinking, text and tool arguments) as output.
func estimate(req *llm.Request, st *Step, text string) llm.Usage {
	in := len(req.System)
	for i := range req.Messages {
		in += messageBytes(&req.Messages[i])
	}
	out := len(st.Thinking) + len(text)
	for _, tc := range st.ToolCalls {
		out += len(tc.Args)
	}
	return llm.Usage{Input: tokens(in), Output: tokens(out)}
}

// messageBytes counts the text a message carries.
func messageBytes(m *llm.Message) int {
	n := 0
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.TextBlock:
			n += len(b.Text)
		case *llm.ThinkingBlock:
			n += len(b.Text)
		case *llm.ToolCallBlock:
			n += len(b.Name) + len(b.Args)
		case *llm.ToolResultBlock:
			for _, c := range b.Content {
				if t, ok := c.(*llm.TextBlock); ok {
					n += len(t.Text)
				}
			}
		}
	}
	return n
}

// tokens converts a byte count to tokens at four bytes a token, rounded up.
func tokens(bytes int) int { return (bytes + 3) / 4 }
