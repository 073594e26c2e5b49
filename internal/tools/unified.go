package tools

import (
	"fmt"
	"strings"
)

// Limits of a rendered diff.
const (
	diffMaxLines     = 2000
	diffMaxLineRunes = 1000
)

// splitLinesKeep splits s into lines that keep their "\n"; a final line
// without one is kept as is.
func splitLinesKeep(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// change is a run of deleted lines a[a0:a1] replaced by b[b0:b1].
type change struct{ a0, a1, b0, b1 int }

// changes lists the runs of a diff in order.
func (d lineDiff) changes() []change {
	var out []change
	i, j, n, m := 0, 0, len(d.delA), len(d.insB)
	for i < n || j < m {
		if (i < n && d.delA[i]) || (j < m && d.insB[j]) {
			c := change{a0: i, b0: j}
			for i < n && d.delA[i] {
				i++
			}
			for j < m && d.insB[j] {
				j++
			}
			c.a1, c.b1 = i, j
			out = append(out, c)
			continue
		}
		i++
		j++
	}
	return out
}

// unifiedDiff renders the diff of a and b (lines from splitLinesKeep) in
// unified format with ctx lines of context, headed by name. It returns the
// text and the numbers of added and removed lines. Output beyond
// diffMaxLines lines is cut with a marker.
func unifiedDiff(name string, a, b []string, ctx int) (text string, added, removed int) {
	d := diffLines(a, b)
	chs := d.changes()
	if len(chs) == 0 {
		return "", 0, 0
	}
	w := &diffWriter{}
	fmt.Fprintf(&w.sb, "--- %s\n+++ %s\n", name, name)
	for start := 0; start < len(chs); {
		end := start + 1
		for end < len(chs) && chs[end].a0-chs[end-1].a1 <= 2*ctx {
			end++
		}
		first, last := chs[start], chs[end-1]
		aStart := max(0, first.a0-ctx)
		aEnd := min(len(a), last.a1+ctx)
		bStart := first.b0 - (first.a0 - aStart)
		bEnd := last.b1 + (aEnd - last.a1)
		w.header(aStart, aEnd-aStart, bStart, bEnd-bStart)
		pos := aStart
		for _, c := range chs[start:end] {
			for ; pos < c.a0; pos++ {
				w.line(' ', a[pos])
			}
			for i := c.a0; i < c.a1; i++ {
				w.line('-', a[i])
			}
			for j := c.b0; j < c.b1; j++ {
				w.line('+', b[j])
			}
			removed += c.a1 - c.a0
			added += c.b1 - c.b0
			pos = c.a1
		}
		for ; pos < aEnd; pos++ {
			w.line(' ', a[pos])
		}
		start = end
	}
	if w.dropped > 0 {
		fmt.Fprintf(&w.sb, "[diff truncated: %d more lines not shown]\n", w.dropped)
	}
	return w.sb.String(), added, removed
}

// diffWriter accumulates diff lines up to diffMaxLines and counts the rest.
type diffWriter struct {
	sb      strings.Builder
	lines   int
	dropped int
}

func (w *diffWriter) header(aStart, aLen, bStart, bLen int) {
	if w.lines >= diffMaxLines {
		w.dropped++
		return
	}
	w.lines++
	fmt.Fprintf(&w.sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
}

func (w *diffWriter) line(prefix byte, l string) {
	if w.lines >= diffMaxLines {
		w.dropped++
		return
	}
	w.lines++
	body, hadNL := strings.CutSuffix(l, "\n")
	cut, truncated := truncateRunes([]byte(body), diffMaxLineRunes)
	w.sb.WriteByte(prefix)
	w.sb.WriteString(strings.ToValidUTF8(string(cut), "\uFFFD"))
	if truncated {
		w.sb.WriteString(" … [line truncated]")
	}
	w.sb.WriteByte('\n')
	if !hadNL {
		w.sb.WriteString("\\ No newline at end of file\n")
	}
}

// hunkRange renders a hunk header range: 1-based start, length omitted
// when 1; an empty range names the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
