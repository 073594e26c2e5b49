package scripted

import "unicode/utf8"

// defaultChunk is the bytes per delta when a step sets none.
const defaultChunk = 8

// nextPiece returns the length of the next delta of s: at most n bytes,
// ending on a rune boundary, but always at least one whole rune so that
// streaming makes progress even when n is smaller than a rune.
func nextPiece(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 {
		_, size := utf8.DecodeRuneInString(s)
		return size
	}
	return cut
}

// prefix returns the longest prefix of s of at most n bytes that does not
// split a rune.
func prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
