package compact

import (
	"strconv"
	"strings"

	"zot.dev/zot/internal/llm"
)

// render writes one message as plain text for the summarising model:
// a header naming its author, then its blocks. Thinking is left out and
// images are named by type and size.
func render(m *llm.Message) string {
	var b strings.Builder
	switch {
	case IsSummary(m):
		b.WriteString("[summary of earlier messages]")
	case m.Role == llm.RoleTool:
		b.WriteString("[tool results]")
	default:
		b.WriteString("[" + string(m.Role) + "]")
	}
	for _, blk := range m.Content {
		switch blk := blk.(type) {
		case *llm.TextBlock:
			b.WriteString("\n")
			b.WriteString(blk.Text)
		case *llm.ImageBlock:
			b.WriteString("\n")
			b.WriteString(imageNote(blk))
		case *llm.ToolCallBlock:
			b.WriteString("\n[tool call " + blk.Name + " " + blk.ID + "] ")
			b.Write(blk.Args)
			if blk.ArgsError != "" {
				b.WriteString(" (invalid arguments: " + blk.ArgsError + ")")
			}
		case *llm.ToolResultBlock:
			b.WriteString("\n[result of " + blk.CallID)
			if blk.IsError {
				b.WriteString(", an error")
			}
			b.WriteString("]")
			for _, c := range blk.Content {
				switch c := c.(type) {
				case *llm.TextBlock:
					b.WriteString("\n")
					b.WriteString(c.Text)
				case *llm.ImageBlock:
					b.WriteString("\n")
					b.WriteString(imageNote(c))
				}
			}
		}
	}
	return b.String()
}

func imageNote(img *llm.ImageBlock) string {
	return "[image: " + img.MIME + ", " + strconv.Itoa(len(img.Data)) + " bytes]"
}
