package render

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"zot.dev/zot/internal/tui/style"
)

// maxDiffCells bounds the table of the line diff (lines of the old text
// times lines of the new, after their common head and tail): past it the
// changed middle is shown as removed, then added.
const maxDiffCells = 4_000_000

// Diff renders the change from old to new text as hunks with a gutter
// of the new text's line numbers, context lines around each change, at most maxLines
// lines (then a line saying how many were left out). A nil old is a new
// file.
func Diff(t *style.Theme, old *string, new string, width, maxLines int) []string {
	var a []string
	if old != nil {
		a = splitLines(*old)
	}
	b := splitLines(new)
	ops := diffLines(a, b)
	const context = 2
	// Which ops are shown: the changes and context lines around them.
	show := make([]bool, len(ops))
	for i, op := range ops {
		if op.kind != ' ' {
			for j := max(0, i-context); j <= min(len(ops)-1, i+context); j++ {
				show[j] = true
			}
		}
	}
	var out []string
	numWidth := len(fmt.Sprint(max(len(a), len(b))))
	gap := false
	for i, op := range ops {
		if !show[i] {
			gap = true
			continue
		}
		if gap && len(out) > 0 {
			out = append(out, t.Hunk.Render(strings.Repeat(" ", numWidth)+" "+t.G.Ellipsis))
		}
		gap = false
		// The numbers are the new text's lines; a removed line has none.
		num := fmt.Sprintf("%*d", numWidth, op.newLine)
		if op.kind == '-' {
			num = strings.Repeat(" ", numWidth)
		}
		text := CleanLine(strings.ReplaceAll(strings.TrimSuffix(op.text, "\r"), "\t", "    "))
		line := num + " " + string(op.kind) + " " + text
		line = ansi.Truncate(line, width, t.G.Ellipsis)
		switch op.kind {
		case '+':
			line = t.Add.Render(line)
		case '-':
			line = t.Del.Render(line)
		default:
			line = t.Faint.Render(line)
		}
		out = append(out, line)
	}
	if maxLines > 0 && len(out) > maxLines {
		left := len(out) - maxLines
		out = append(out[:maxLines], t.Faint.Render(fmt.Sprintf("%s %d more lines", t.G.Ellipsis, left)))
	}
	return out
}

// DiffStat counts the lines added and removed from old to new.
func DiffStat(old *string, new string) (added, removed int) {
	var a []string
	if old != nil {
		a = splitLines(*old)
	}
	for _, op := range diffLines(a, splitLines(new)) {
		switch op.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// op is one line of a diff: ' ' kept, '-' removed, '+' added, with its
// line numbers (1-based) in the old and new text.
type op struct {
	kind             byte
	text             string
	oldLine, newLine int
}

// diffLines is a longest-common-subsequence line diff, after the common
// head and tail are set aside.
func diffLines(a, b []string) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ops []op
	for i := 0; i < head; i++ {
		ops = append(ops, op{' ', a[i], i + 1, i + 1})
	}
	am, bm := a[head:len(a)-tail], b[head:len(b)-tail]
	if len(am)*len(bm) > maxDiffCells {
		for i, s := range am {
			ops = append(ops, op{'-', s, head + i + 1, 0})
		}
		for j, s := range bm {
			ops = append(ops, op{'+', s, 0, head + j + 1})
		}
	} else {
		// lcs[i][j]: the longest common subsequence of am[i:] and bm[j:].
		n, m := len(am), len(bm)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if am[i] == bm[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && am[i] == bm[j]:
				ops = append(ops, op{' ', am[i], head + i + 1, head + j + 1})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', am[i], head + i + 1, 0})
				i++
			default:
				ops = append(ops, op{'+', bm[j], 0, head + j + 1})
				j++
			}
		}
	}
	for k := 0; k < tail; k++ {
		i, j := len(a)-tail+k, len(b)-tail+k
		ops = append(ops, op{' ', a[i], i + 1, j + 1})
	}
	return ops
}
