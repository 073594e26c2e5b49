package agent

import (
	"fmt"
	"maps"

	"zot.dev/zot/internal/llm"
)

// textOnly returns the non-empty text blocks of content.
func textOnly(content []llm.Block) []llm.Block {
	var out []llm.Block
	for _, b := range content {
		if t, ok := b.(*llm.TextBlock); ok && t.Text != "" {
			out = append(out, t)
		}
	}
	return out
}

// dropEmptyText returns content without empty text blocks, which some
// providers refuse.
func dropEmptyText(content []llm.Block) []llm.Block {
	out := content[:0:0]
	for _, b := range content {
		if t, ok := b.(*llm.TextBlock); ok && t.Text == "" {
			continue
		}
		out = append(out, b)
	}
	return out
}

// hasText reports whether content holds a non-empty text block.
func hasText(content []llm.Block) bool {
	for _, b := range content {
		if t, ok := b.(*llm.TextBlock); ok && t.Text != "" {
			return true
		}
	}
	return false
}

// replaceText returns content with its text blocks replaced by one block
// holding text, where the first text block was (or first, when there was
// none). An empty text removes the text blocks.
func replaceText(content []llm.Block, text string) []llm.Block {
	out := make([]llm.Block, 0, len(content)+1)
	placed := text == ""
	for _, b := range content {
		if _, ok := b.(*llm.TextBlock); ok {
			if !placed {
				out = append(out, &llm.TextBlock{Text: text})
				placed = true
			}
			continue
		}
		out = append(out, b)
	}
	if !placed {
		out = append([]llm.Block{&llm.TextBlock{Text: text}}, out...)
	}
	return out
}

// fixCallIDs gives a fresh id to each call whose id is empty or repeats an
// earlier one, so every result can name its call.
func fixCallIDs(calls []*llm.ToolCallBlock, step int) {
	seen := make(map[string]bool, len(calls))
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			for n := 0; ; n++ {
				id := fmt.Sprintf("zot_%d_%d_%d", step, i, n)
				if !seen[id] && !idUsed(calls, id) {
					c.ID = id
					break
				}
			}
		}
		seen[c.ID] = true
	}
}

func idUsed(calls []*llm.ToolCallBlock, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// metaModel is the Meta key of an assistant message naming the model that
// wrote it.
const metaModel = "model"

// withRawArgs returns meta with the raw argument text of calls recorded
// under metaRawArgs keys; meta itself is not modified.
func withRawArgs(meta map[string]string, raw map[*llm.ToolCallBlock]string) map[string]string {
	if len(raw) == 0 {
		return meta
	}
	out := maps.Clone(meta)
	if out == nil {
		out = make(map[string]string, len(raw))
	}
	for c, text := range raw {
		out[metaRawArgs+c.ID] = text
	}
	return out
}

// blockReason is the reason an interceptor gave, or a stock one.
func blockReason(reason string) string {
	if reason == "" {
		return "blocked by an interceptor"
	}
	return oneLine(reason)
}
