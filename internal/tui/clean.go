package tui

import "zot.dev/zot/internal/tui/render"

// clean returns s, text from the session, with its control characters
// shown escaped (render.Clean). Newlines and tabs are kept.
func clean(s string) string { return render.Clean(s) }

// cleanLine is clean for text shown on one line (render.CleanLine).
func cleanLine(s string) string { return render.CleanLine(s) }
