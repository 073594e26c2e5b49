package main

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// plainText wraps w, a terminal's text output, so that the control
// characters in what it is given (stored text: a model's answer, a tool's
// output, an imported session's fields) are shown escaped (`\x1b`,
// `\u009b`) instead of reaching the terminal, where they could clear the
// screen, set its title, write the clipboard (OSC 52) or overwrite a line
// (a carriage return). Newlines and tabs pass.
func plainText(w io.Writer) io.Writer { return plainWriter{w} }

type plainWriter struct{ w io.Writer }

// Write writes p with its control characters escaped, and reports p's
// whole length once all of it was written.
func (pw plainWriter) Write(p []byte) (int, error) {
	clean := true
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 || c >= 0x80 && c < 0xa0 {
			clean = false
			break
		}
	}
	if clean {
		return pw.w.Write(p)
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			if c := p[i]; c >= 0x80 && c < 0xa0 {
				out = fmt.Appendf(out, `\x%02x`, c) // a lone C1 byte
			} else {
				out = append(out, c)
			}
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	if _, err := pw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
