package tools

import (
	"strings"
	"unicode/utf8"
)

// Wildcard matching shared by find, grep's file filter and the gitignore
// matcher. A pattern is split at "/" into segments matched one path segment
// each; within a segment '*' matches any run of characters, '?' one
// character, "[...]" one character of a class ("[a-z0-9_]", negated with
// '!' or '^'), and '\' makes the next character literal. A segment that is
// exactly "**" matches any number of whole segments: zero or more when it
// leads or sits in the middle, one or more when it ends the pattern.

// globPattern is a compiled path pattern.
type globPattern struct {
	segs []string
}

// compileGlob splits pattern into segments, dropping empty ones and
// collapsing runs of "**".
func compileGlob(pattern string) globPattern {
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		if s == "" || (s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**") {
			continue
		}
		segs = append(segs, s)
	}
	return globPattern{segs: segs}
}

// match reports whether the slash-separated path matches.
func (g globPattern) match(path string) bool {
	return matchSegs(g.segs, strings.Split(path, "/"))
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return len(segs) > 0
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 || !matchSegment(pat[0], segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// matchSegment reports whether name matches the one-segment wildcard
// pattern pat.
func matchSegment(pat, name string) bool {
	// Iterative matching with backtracking to the most recent '*'.
	px, nx := 0, 0
	starP, starN := -1, -1
	for nx < len(name) {
		if px < len(pat) {
			switch pat[px] {
			case '*':
				for px < len(pat) && pat[px] == '*' {
					px++
				}
				starP, starN = px, nx
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(name[nx:])
				px++
				nx += w
				continue
			case '[':
				r, w := utf8.DecodeRuneInString(name[nx:])
				if ok, end, valid := matchClass(pat, px, r); valid {
					if ok {
						px = end
						nx += w
						continue
					}
					break
				}
				if name[nx] == '[' {
					px++
					nx++
					continue
				}
			default:
				pc, pw := literalAt(pat, px)
				r, w := utf8.DecodeRuneInString(name[nx:])
				if pc == r {
					px += pw
					nx += w
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(name[starN:])
		starN += w
		px, nx = starP, starN
	}
	for px < len(pat) && pat[px] == '*' {
		px++
	}
	return px == len(pat)
}

// literalAt returns the literal character at pat[i] (after a '\' escape,
// the escaped one) and the bytes it spans.
func literalAt(pat string, i int) (rune, int) {
	if pat[i] == '\\' && i+1 < len(pat) {
		r, w := utf8.DecodeRuneInString(pat[i+1:])
		return r, w + 1
	}
	r, w := utf8.DecodeRuneInString(pat[i:])
	return r, w
}

// matchClass matches r against the bracket expression starting at pat[i]
// ('['). valid is false when the expression has no closing ']', in which
// case '[' is an ordinary character. end is the index after the ']'.
func matchClass(pat string, i int, r rune) (ok bool, end int, valid bool) {
	j := i + 1
	negate := false
	if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
		negate = true
		j++
	}
	first := true
	for j < len(pat) {
		if pat[j] == ']' && !first {
			return ok != negate, j + 1, true
		}
		first = false
		lo, w := literalAt(pat, j)
		j += w
		hi := lo
		if j+1 < len(pat) && pat[j] == '-' && pat[j+1] != ']' {
			hi, w = literalAt(pat, j+1)
			j += 1 + w
		}
		if lo <= r && r <= hi {
			ok = true
		}
	}
	return false, 0, false
}
