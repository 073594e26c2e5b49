package render

import (
	"fmt"
	"strings"
)

// Clean returns s, text from the session or from an extension (an
// answer, a tool's output, a diff, a panel's line, a notice), with its
// control characters shown escaped (`\x1b`, `\u009b`) rather than passed
// to the terminal, where they could set its title, write its clipboard
// (OSC 52), clear it or move the cursor. Newlines and tabs are kept (a
// CRLF is a newline).
func Clean(s string) string {
	return escape(s, false)
}

// CleanLine is Clean for text shown on one line: a tab is a space, and
// newlines and carriage returns are shown escaped too.
func CleanLine(s string) string {
	return strings.ReplaceAll(escape(s, true), "\t", " ")
}

func escape(s string, line bool) string {
	if !line && strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	bad := func(r rune) bool { return isControl(r) || line && (r == '\n') }
	if strings.IndexFunc(s, bad) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80 && bad(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case bad(r):
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
