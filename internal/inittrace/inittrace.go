// Package inittrace reads what the Go runtime prints about package
// initialisation when a program runs with GODEBUG=inittrace=1: one line on
// stderr per package whose init does work, before main starts,
//
//	init net/http @1.2 ms, 0.047 ms clock, 4712 bytes, 49 allocs
//
// (the package, when its init started after the process did, how long it
// ran, and what it allocated). The bytes and allocations of a binary are
// the same from run to run; the times are not. Tests and benchmarks use it
// to hold zot's start-up work to a budget; the product does not link it.
package inittrace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Init is one package's initialisation.
type Init struct {
	// Package is the import path.
	Package string
	// ClockMS is the wall time the init ran, in milliseconds.
	ClockMS float64
	// Bytes and Allocs are what it allocated on the heap.
	Bytes, Allocs int64
}

// Trace is every package init of one start, in the order they ran.
type Trace []Init

// Parse reads the init lines out of a program's stderr; other lines are
// skipped. It fails on a line that starts like an init line but does not
// read as one (a runtime whose format changed), and on a read error.
func Parse(r io.Reader) (Trace, error) {
	var t Trace
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("init ")) || !bytes.Contains(line, []byte(" ms clock, ")) {
			continue
		}
		in, err := parseLine(string(line))
		if err != nil {
			return nil, err
		}
		t = append(t, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the init trace: %w", err)
	}
	return t, nil
}

// parseLine reads "init PKG @T ms, C ms clock, B bytes, A allocs".
func parseLine(line string) (Init, error) {
	bad := func(what string) (Init, error) {
		return Init{}, fmt.Errorf("init trace line %q: %s", line, what)
	}
	f := strings.Fields(line)
	if len(f) != 11 || f[0] != "init" || !strings.HasPrefix(f[2], "@") || f[3] != "ms," ||
		f[5] != "ms" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
		return bad("not in the form \"init PKG @T ms, C ms clock, B bytes, A allocs\"")
	}
	in := Init{Package: f[1]}
	var err error
	if in.ClockMS, err = strconv.ParseFloat(f[4], 64); err != nil {
		return bad("the clock time is not a number")
	}
	if in.Bytes, err = strconv.ParseInt(f[7], 10, 64); err != nil {
		return bad("the bytes are not a number")
	}
	if in.Allocs, err = strconv.ParseInt(f[9], 10, 64); err != nil {
		return bad("the allocations are not a number")
	}
	return in, nil
}

// Bytes is what all the inits allocated together.
func (t Trace) Bytes() int64 {
	var n int64
	for _, in := range t {
		n += in.Bytes
	}
	return n
}

// Allocs is the number of allocations of all the inits together.
func (t Trace) Allocs() int64 {
	var n int64
	for _, in := range t {
		n += in.Allocs
	}
	return n
}

// ClockMS is the wall time of all the inits together, in milliseconds.
func (t Trace) ClockMS() float64 {
	var ms float64
	for _, in := range t {
		ms += in.ClockMS
	}
	return ms
}

// Heaviest returns the n inits that allocated the most bytes, most first.
func (t Trace) Heaviest(n int) Trace {
	s := slices.Clone(t)
	slices.SortStableFunc(s, func(a, b Init) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return 0
	})
	return s[:min(n, len(s))]
}

// String renders the trace as a table of package, bytes, allocations and
// clock time, one init a line.
func (t Trace) String() string {
	var sb strings.Builder
	for _, in := range t {
		fmt.Fprintf(&sb, "%-60s %9d B %6d allocs %7.3f ms\n", in.Package, in.Bytes, in.Allocs, in.ClockMS)
	}
	return sb.String()
}
