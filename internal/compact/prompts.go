package compact

import (
	"strconv"
	"strings"
)

// summaryPreamble starts the summary message that replaces the older
// messages.
const summaryPreamble = "The earlier part of this conversation was compacted into the summary below.\n\n"

// systemPrompt is the system prompt of every summarising call.
const systemPrompt = "You summarise conversations between a user and zot, a coding agent, so that the " +
	"work can continue from your summary alone. Do not continue the conversation, answer its " +
	"questions or call tools: write only the summary."

// sections is the shape every summary takes.
const sections = "Keep file paths, function and type names, commands, error messages and decisions " +
	"exactly as written. Use these sections, leaving out any that would be empty:\n" +
	"## Goal\n## Constraints and preferences\n## Progress (done, in progress, blocked)\n" +
	"## Key decisions\n## Next steps\n## Critical context"

// conversationPrompt asks for a summary of rendered conversation text;
// part and parts number the chunk when the text is one of several (parts
// > 1).
func conversationPrompt(text, instructions string, part, parts int) string {
	var b strings.Builder
	if parts > 1 {
		b.WriteString("Below is part " + strconv.Itoa(part) + " of " + strconv.Itoa(parts))
		b.WriteString(" of a long conversation, oldest first. Summarise this part only; " +
			"its summary will be merged with those of the other parts.\n")
	} else {
		b.WriteString("Summarise the conversation below.\n")
	}
	b.WriteString(sections)
	writeInstructions(&b, instructions)
	b.WriteString("\n\n<conversation>\n")
	b.WriteString(text)
	b.WriteString("\n</conversation>")
	return b.String()
}

// mergePrompt asks for one summary from the summaries of consecutive parts.
func mergePrompt(text, instructions string) string {
	var b strings.Builder
	b.WriteString("Below are summaries of consecutive parts of one conversation, oldest first. " +
		"Merge them into a single summary; where they disagree, the later part is right.\n")
	b.WriteString(sections)
	writeInstructions(&b, instructions)
	b.WriteString("\n\n<summaries>\n")
	b.WriteString(text)
	b.WriteString("\n</summaries>")
	return b.String()
}

func writeInstructions(b *strings.Builder, instructions string) {
	if s := strings.TrimSpace(instructions); s != "" {
		b.WriteString("\n\nThe user's instructions for this summary:\n")
		b.WriteString(s)
	}
}
