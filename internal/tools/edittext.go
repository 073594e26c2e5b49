package tools

import (
	"fmt"
	"sort"
	"strings"
)

// textEdit replaces the single occurrence of old with new.
type textEdit struct{ old, new string }

// editOutcome is the result of applying edits to a file's bytes.
type editOutcome struct {
	// content is the new file content, BOM and line endings preserved.
	content []byte
	// before and after are the old and new text with "\n" line endings and
	// no BOM, for the diff.
	before, after string
}

const utf8BOM = "\xEF\xBB\xBF"

// normalized is file content with CRLF turned into LF, plus what is needed
// to map positions back to the original bytes.
type normalized struct {
	bom  bool
	body string // original content after the BOM
	text string // body with every "\r\n" turned into "\n"
	// crAt lists, in increasing order, the positions in text of the "\n"s
	// that were "\r\n" in body.
	crAt []int
	// eol is the file's prevailing line ending, used for inserted text.
	eol string
}

func normalize(content []byte) normalized {
	s := string(content)
	nz := normalized{eol: "\n"}
	if strings.HasPrefix(s, utf8BOM) {
		nz.bom = true
		s = s[len(utf8BOM):]
	}
	nz.body = s
	if !strings.Contains(s, "\r\n") {
		nz.text = s
		return nz
	}
	var sb strings.Builder
	sb.Grow(len(s))
	bareLF := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			nz.crAt = append(nz.crAt, sb.Len())
			continue
		}
		if c == '\n' && (i == 0 || s[i-1] != '\r') {
			bareLF++
		}
		sb.WriteByte(c)
	}
	nz.text = sb.String()
	if len(nz.crAt) >= bareLF {
		nz.eol = "\r\n"
	}
	return nz
}

// orig maps a position in text to the position in body.
func (nz *normalized) orig(p int) int {
	return p + sort.SearchInts(nz.crAt, p)
}

// lineOf returns the 1-based line number of position p in text.
func lineOf(text string, p int) int { return strings.Count(text[:p], "\n") + 1 }

// applyEdits applies edits to content. Every old text must occur exactly
// once in the original (compared with LF line endings) and no two may
// overlap. shown names the file in error messages, which are meant for the
// model.
func applyEdits(content []byte, edits []textEdit, shown string) (editOutcome, error) {
	nz := normalize(content)
	type span struct{ start, end, idx int }
	spans := make([]span, 0, len(edits))
	for i, e := range edits {
		old := strings.ReplaceAll(e.old, "\r\n", "\n")
		if old == "" {
			return editOutcome{}, fmt.Errorf("edits[%d].old_text is empty; give the exact text to replace", i)
		}
		at := occurrences(nz.text, old, 4)
		switch len(at) {
		case 0:
			return editOutcome{}, fmt.Errorf("edits[%d].old_text matched 0 times in %s; it must match the file exactly, whitespace and indentation included%s",
				i, shown, nearHint(nz.text, old))
		case 1:
			spans = append(spans, span{at[0], at[0] + len(old), i})
		default:
			n := len(at)
			if n == 4 {
				n = len(occurrences(nz.text, old, -1))
			}
			lines := make([]string, 0, 3)
			for _, p := range at[:min(3, len(at))] {
				lines = append(lines, fmt.Sprint(lineOf(nz.text, p)))
			}
			more := ""
			if n > 3 {
				more = ", ..."
			}
			return editOutcome{}, fmt.Errorf("edits[%d].old_text matched %d times in %s (at lines %s%s); it must match exactly once, so include more surrounding text",
				i, n, shown, strings.Join(lines, ", "), more)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			a, b := spans[i-1].idx, spans[i].idx
			return editOutcome{}, fmt.Errorf("edits[%d] and edits[%d] overlap in %s; merge them into one edit", min(a, b), max(a, b), shown)
		}
	}

	var body, after strings.Builder
	if nz.bom {
		body.WriteString(utf8BOM)
	}
	prevNorm, prevOrig := 0, 0
	for _, sp := range spans {
		repl := strings.ReplaceAll(edits[sp.idx].new, "\r\n", "\n")
		after.WriteString(nz.text[prevNorm:sp.start])
		after.WriteString(repl)
		ostart, oend := nz.orig(sp.start), nz.orig(sp.end)
		body.WriteString(nz.body[prevOrig:ostart])
		if nz.eol != "\n" {
			repl = strings.ReplaceAll(repl, "\n", nz.eol)
		}
		body.WriteString(repl)
		prevNorm, prevOrig = sp.end, oend
	}
	after.WriteString(nz.text[prevNorm:])
	body.WriteString(nz.body[prevOrig:])
	out := editOutcome{content: []byte(body.String()), before: nz.text, after: after.String()}
	if out.after == out.before {
		return editOutcome{}, fmt.Errorf("the edits leave %s unchanged (new_text equals old_text)", shown)
	}
	return out, nil
}

// occurrences returns the start positions of sub in s, overlapping matches
// included, stopping after limit matches (limit < 0: all).
func occurrences(s, sub string, limit int) []int {
	var at []int
	for from := 0; limit < 0 || len(at) < limit; {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			break
		}
		at = append(at, from+i)
		from += i + 1
	}
	return at
}

// nearHint points at where the first line of a missed old text occurs, to
// help the model find what differs.
func nearHint(text, old string) string {
	for _, l := range strings.Split(old, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if i := strings.Index(text, l); i >= 0 {
			return fmt.Sprintf(" (its first line %q occurs at line %d; compare the lines after it)", truncateString(l, 80), lineOf(text, i))
		}
		return ""
	}
	return ""
}

// truncateString cuts s to at most n runes, adding "…" when it cut.
func truncateString(s string, n int) string {
	b, cut := truncateRunes([]byte(s), n)
	if cut {
		return string(b) + "…"
	}
	return s
}
