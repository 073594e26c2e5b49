package tools

import "math"

// Line diff: Myers' O(ND) algorithm in its linear-space form. The search
// for the middle snake runs forward from the start and backward from the
// end of the two sequences at once; the problem is then split at the snake
// and each half solved the same way. Memory is O(N+M): two diagonal
// vectors shared by all subproblems plus one mark per line.

// Work limits: a single split gives up after diffMaxCost edit steps and the
// whole diff after diffWorkBudget units of work; a subproblem that gives up
// is reported as "all of A deleted, all of B inserted", which is a correct
// but not minimal edit script.
const (
	diffMaxCost    = 1 << 12
	diffWorkBudget = 1 << 26
)

// lineDiff holds the result of diffing two line sequences: delA[i] marks
// line i of a as deleted, insB[j] marks line j of b as inserted. Unmarked
// lines of a and b correspond one to one, in order.
type lineDiff struct {
	delA, insB []bool
}

// diffLines computes a (normally minimal) line diff of a and b.
func diffLines(a, b []string) lineDiff {
	ids := make(map[string]int32, len(a))
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(a), b: intern(b)}
	n, m := len(a), len(b)
	d.off = m + 1
	d.fd = make([]int, n+m+3)
	d.bd = make([]int, n+m+3)
	d.res = lineDiff{delA: make([]bool, n), insB: make([]bool, m)}
	d.compare(0, n, 0, m)
	return d.res
}

// differ is the state of one diffLines call.
type differ struct {
	a, b   []int32
	fd, bd []int // furthest x per diagonal, forward and backward; index diagonal+off
	off    int
	work   int
	res    lineDiff
}

// compare diffs a[xoff:xlim] against b[yoff:ylim].
func (d *differ) compare(xoff, xlim, yoff, ylim int) {
	for xoff < xlim && yoff < ylim && d.a[xoff] == d.b[yoff] {
		xoff++
		yoff++
	}
	for xlim > xoff && ylim > yoff && d.a[xlim-1] == d.b[ylim-1] {
		xlim--
		ylim--
	}
	d.work += (xlim - xoff) + (ylim - yoff)
	switch {
	case xoff == xlim:
		markRange(d.res.insB, yoff, ylim)
	case yoff == ylim:
		markRange(d.res.delA, xoff, xlim)
	default:
		x, y, ok := d.split(xoff, xlim, yoff, ylim)
		if !ok || x < xoff || x > xlim || y < yoff || y > ylim ||
			(x == xoff && y == yoff) || (x == xlim && y == ylim) {
			markRange(d.res.delA, xoff, xlim)
			markRange(d.res.insB, yoff, ylim)
			return
		}
		d.compare(xoff, x, yoff, y)
		d.compare(x, xlim, y, ylim)
	}
}

func markRange(marks []bool, from, to int) {
	for i := from; i < to; i++ {
		marks[i] = true
	}
}

// split finds a point (x, y) on an optimal edit path of the subproblem by
// searching for the middle snake. The subproblem must start and end with
// differing elements (compare strips common ends first). ok is false when
// the work limits were reached.
func (d *differ) split(xoff, xlim, yoff, ylim int) (x, y int, ok bool) {
	fd, bd, off := d.fd, d.bd, d.off
	a, b := d.a, d.b
	dmin, dmax := xoff-ylim, xlim-yoff // diagonals of the subproblem (x - y)
	fmid, bmid := xoff-yoff, xlim-ylim // diagonals of its start and end
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	odd := (fmid-bmid)&1 != 0
	fd[off+fmid] = xoff
	bd[off+bmid] = xlim
	for cost := 1; ; cost++ {
		if cost > diffMaxCost || d.work > diffWorkBudget {
			return 0, 0, false
		}
		// Forward: extend each diagonal's furthest point by one edit and
		// follow the snake. -1 marks diagonals outside the reached range.
		if fmin > dmin {
			fmin--
			fd[off+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fd[off+fmax+1] = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			lo, hi := fd[off+k-1], fd[off+k+1]
			x := hi
			if lo >= hi {
				x = lo + 1
			}
			y := x - k
			x0 := x
			for x < xlim && y < ylim && a[x] == b[y] {
				x++
				y++
			}
			d.work += 1 + x - x0
			fd[off+k] = x
			if odd && bmin <= k && k <= bmax && bd[off+k] <= x {
				return x, y, true
			}
		}
		// Backward, the mirror image; MaxInt marks unreached diagonals.
		if bmin > dmin {
			bmin--
			bd[off+bmin-1] = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bd[off+bmax+1] = math.MaxInt
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			lo, hi := bd[off+k-1], bd[off+k+1]
			x := hi - 1
			if lo < hi {
				x = lo
			}
			y := x - k
			x0 := x
			for x > xoff && y > yoff && a[x-1] == b[y-1] {
				x--
				y--
			}
			d.work += 1 + x0 - x
			bd[off+k] = x
			if !odd && fmin <= k && k <= fmax && x <= fd[off+k] {
				return x, y, true
			}
		}
	}
}
