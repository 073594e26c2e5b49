package tools

import (
	"math/rand"
	"runtime"
	"strconv"
	"testing"
)

// lcsLen is the textbook quadratic LCS length, the reference for minimality.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkDiff verifies that d is a valid edit script from a to b and returns
// its number of deletions plus insertions.
func checkDiff(t *testing.T, a, b []string, d lineDiff) int {
	t.Helper()
	var keptA, keptB []string
	edits := 0
	for i, del := range d.delA {
		if del {
			edits++
		} else {
			keptA = append(keptA, a[i])
		}
	}
	for j, ins := range d.insB {
		if ins {
			edits++
		} else {
			keptB = append(keptB, b[j])
		}
	}
	if len(keptA) != len(keptB) {
		t.Fatalf("kept %d lines of a but %d of b", len(keptA), len(keptB))
	}
	for i := range keptA {
		if keptA[i] != keptB[i] {
			t.Fatalf("kept line %d differs: %q vs %q", i, keptA[i], keptB[i])
		}
	}
	return edits
}

func randomLines(r *rand.Rand, n, alphabet int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(r.Intn(alphabet))
	}
	return out
}

func TestDiffLinesMinimalOnRandomInputs(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for iter := 0; iter < 3000; iter++ {
		n, m := r.Intn(40), r.Intn(40)
		if iter%5 == 0 {
			m = r.Intn(4) // skewed shapes
		}
		alphabet := 1 + r.Intn(6)
		a, b := randomLines(r, n, alphabet), randomLines(r, m, alphabet)
		d := diffLines(a, b)
		got := checkDiff(t, a, b, d)
		want := len(a) + len(b) - 2*lcsLen(a, b)
		if got != want {
			t.Fatalf("iteration %d: %d edits, minimal is %d\na=%v\nb=%v", iter, got, want, a, b)
		}
	}
}

func TestDiffLinesEdgeCases(t *testing.T) {
	cases := []struct{ a, b []string }{
		{nil, nil},
		{nil, []string{"x"}},
		{[]string{"x"}, nil},
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{[]string{"a", "b", "c"}, []string{"c", "b", "a"}},
		{[]string{"a"}, []string{"b"}},
	}
	for _, c := range cases {
		d := diffLines(c.a, c.b)
		got := checkDiff(t, c.a, c.b, d)
		if want := len(c.a) + len(c.b) - 2*lcsLen(c.a, c.b); got != want {
			t.Errorf("diff(%v, %v): %d edits, want %d", c.a, c.b, got, want)
		}
	}
}

// TestDiffLinesLinearMemory diffs two 20,000-line sequences that differ in
// every tenth line; a quadratic table would need gigabytes.
func TestDiffLinesLinearMemory(t *testing.T) {
	const n = 20000
	a := make([]string, n)
	b := make([]string, n)
	for i := range a {
		a[i] = "line " + strconv.Itoa(i)
		b[i] = a[i]
		if i%10 == 0 {
			b[i] = "changed " + strconv.Itoa(i)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := diffLines(a, b)
	runtime.ReadMemStats(&after)
	edits := checkDiff(t, a, b, d)
	if edits != 2*(n/10) {
		t.Errorf("edits = %d, want %d", edits, 2*(n/10))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("diff allocated %d bytes; want linear memory (< 32 MiB)", alloc)
	}
}

func TestDiffLinesFallsBackWhenTooExpensive(t *testing.T) {
	// Completely different sequences: still a valid script.
	const n = 3000
	a := make([]string, n)
	b := make([]string, n)
	for i := range a {
		a[i] = "a" + strconv.Itoa(i)
		b[i] = "b" + strconv.Itoa(i)
	}
	if got := checkDiff(t, a, b, diffLines(a, b)); got != 2*n {
		t.Errorf("edits = %d, want %d", got, 2*n)
	}
}
