package bench

import (
	"slices"
)

// column gathers one binary's samples for one provider.
type column struct {
	samples [numAllMetrics][]float64
	errs    [numAllMetrics]string
	// failed marks the sessions that failed; they are not run again.
	failed [numSessions]bool
}

func (c *column) add(m Metric, v float64) { c.samples[m] = append(c.samples[m], v) }

// fail records err against m unless m already has an error.
func (c *column) fail(m Metric, err error) {
	if c.errs[m] == "" {
		c.errs[m] = err.Error()
	}
}

// status summarises the column for a progress line.
func (c *column) status() string {
	for _, e := range c.errs {
		if e != "" {
			return "error"
		}
	}
	return "ok"
}

// cell turns the samples of m into a report cell.
func (c *column) cell(m Metric) Cell {
	if c.errs[m] != "" {
		return Cell{Err: c.errs[m], Samples: len(c.samples[m])}
	}
	return Cell{Value: median(c.samples[m]), Samples: len(c.samples[m])}
}

// section builds the report section of one provider from the metrics ms.
func section(provider string, ms []Metric, cols []column) Section {
	s := Section{Provider: provider}
	for _, m := range ms {
		row := Row{Metric: m, Cells: make([]Cell, len(cols))}
		for i := range cols {
			row.Cells[i] = cols[i].cell(m)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// median returns the median of vs, or 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
