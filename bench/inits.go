package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"zot.dev/zot/internal/inittrace"
)

// InitRow is what the package inits of one binary did at its start, as
// GODEBUG=inittrace=1 reports it: the bytes and allocations are the same
// in every run, the clock time is the median of the runs.
type InitRow struct {
	// Packages is the number of packages whose init did work.
	Packages int
	// Bytes and Allocs are what the inits allocated together.
	Bytes, Allocs int64
	// ClockMS is the median over the runs of the inits' time together.
	ClockMS float64
	// Heaviest are the inits that allocated the most, most first.
	Heaviest inittrace.Trace
	// Err says why the binary's inits could not be read.
	Err string
}

// initRuns is how many starts of each binary the init section times.
const initRuns = 5

// initSection starts every binary initRuns times as rpc with
// GODEBUG=inittrace=1, pings it, closes its stdin, and reads the init
// lines from its stderr.
func (h *harness) initSection(ctx context.Context, report *Report) {
	p := h.cfg.Providers[0]
	report.Inits = make([]InitRow, len(report.Binaries))
	for i, b := range report.Binaries {
		row := &report.Inits[i]
		if !answeredPing(report, i) {
			row.Err = "not measured: it answered no ping above"
			continue
		}
		var clocks []float64
		for range initRuns {
			tr, err := h.initTrace(ctx, b, p)
			if err != nil {
				row.Err = err.Error()
				break
			}
			clocks = append(clocks, tr.ClockMS())
			row.Packages, row.Bytes, row.Allocs = len(tr), tr.Bytes(), tr.Allocs()
			row.Heaviest = tr.Heaviest(3)
		}
		if row.Err == "" {
			row.ClockMS = median(clocks)
		}
	}
	h.logf("package inits: measured")
}

// answeredPing reports whether binary i answered a ping in any section.
func answeredPing(report *Report, i int) bool {
	for _, s := range report.Sections {
		for _, row := range s.Rows {
			if row.Metric == SpawnPing && row.Cells[i].OK() {
				return true
			}
		}
	}
	return false
}

// initTrace runs b once with GODEBUG=inittrace=1 and returns its inits.
func (h *harness) initTrace(ctx context.Context, b Binary, p string) (inittrace.Trace, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, resolve(b.Path), h.args(p)...)
	cmd.Dir = h.fx.cwd
	cmd.Env = append(append([]string(nil), h.env...), "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader(`{"type":"ping","id":"inits"}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if last := lastLine(stderr.String()); last != "" {
			err = fmt.Errorf("%w: %s", err, last)
		}
		return nil, fmt.Errorf("%s with GODEBUG=inittrace=1: %w", b.Name, err)
	}
	if !bytes.Contains(stdout.Bytes(), []byte(`"inits"`)) {
		return nil, fmt.Errorf("%s with GODEBUG=inittrace=1 did not answer the ping", b.Name)
	}
	tr, err := inittrace.Parse(&stderr)
	if err != nil {
		return nil, err
	}
	if len(tr) == 0 {
		return nil, fmt.Errorf("%s printed no init lines (not a Go program?)", b.Name)
	}
	return tr, nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// writeInits renders the package inits of every binary.
func (r *Report) writeInits(sb *strings.Builder) {
	sb.WriteString("\n### package initialisation at start\n\n")
	fmt.Fprintf(sb, "Every binary started %d times as rpc with `GODEBUG=inittrace=1` and pinged: the inits of the packages it links, "+
		"which Go runs before main whatever the command. Bytes and allocations are the same in every start; the clock is the median. "+
		"zot's inits are held to a budget by a test (`TestStartInitsWithinBudget` in cmd/zot).\n\n", initRuns)
	writeRow(sb, []string{"binary", "packages", "KiB allocated", "allocations", "clock (ms)", "heaviest"})
	writeRow(sb, []string{"---", "---:", "---:", "---:", "---:", "---"})
	for i, b := range r.Binaries {
		row := r.Inits[i]
		if row.Err != "" {
			writeRow(sb, []string{escape(b.Name), "—", "—", "—", "—", escape(row.Err)})
			continue
		}
		var heavy []string
		for _, in := range row.Heaviest {
			heavy = append(heavy, fmt.Sprintf("%s %.1f KiB", in.Package, float64(in.Bytes)/1024))
		}
		writeRow(sb, []string{escape(b.Name), fmt.Sprint(row.Packages), fmt.Sprintf("%.1f", float64(row.Bytes)/1024),
			fmt.Sprint(row.Allocs), fmt.Sprintf("%.2f", row.ClockMS), escape(strings.Join(heavy, ", "))})
	}
}
