package tui

import (
	"fmt"
	"strings"
)

// clean returns s, text from the session (an answer, a tool's output, a
// command's display), with its control characters shown escaped (`\x1b`,
// `\u009b`) rather than passed to the terminal, where they could set its
// title, write its clipboard (OSC 52), clear it or move the cursor.
// Newlines and tabs are kept.
func clean(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl reports whether r is a C0 control other than newline and tab,
// DEL or a C1 control.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0
}
