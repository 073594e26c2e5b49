package models

import (
	"math"
	"sync"

	"zot.dev/zot/internal/llm"
)

// Totals is token usage with its cost.
type Totals struct {
	Usage   llm.Usage
	CostUSD float64
	// CostUnknown says some of the usage was of an unpriced model: its
	// cost is unknown and CostUSD leaves it out.
	CostUnknown bool
}

// Meter accumulates the usage and cost of model calls. The zero value is an
// empty meter. It is safe for concurrent use.
//
// The running cost is kept in whole picodollars, so the total of many calls
// is as exact as the cost of one (see [Model.Cost]) and does not depend on
// the order the calls were added in.
type Meter struct {
	mu       sync.Mutex
	usage    llm.Usage
	pico     int64
	unpriced bool // some usage was of an unpriced model
}

// Add records one call of m that used u, at m's prices (see [Model.At]
// for the prices of a given day). It returns that call's totals and
// the running totals including it.
func (mt *Meter) Add(m Model, u llm.Usage) (turn, total Totals) {
	p := m.costPico(u)
	unknown := m.Unpriced && u != (llm.Usage{})
	mt.mu.Lock()
	mt.usage = mt.usage.Add(u)
	mt.pico = addSat(mt.pico, p)
	mt.unpriced = mt.unpriced || unknown
	total = Totals{Usage: mt.usage, CostUSD: float64(mt.pico) / 1e12, CostUnknown: mt.unpriced}
	mt.mu.Unlock()
	return Totals{Usage: u, CostUSD: float64(p) / 1e12, CostUnknown: unknown}, total
}

// AddSpent records usage whose cost was already reckoned elsewhere (a
// sub-agent's model calls, metered by its own meter): u and costUSD are
// added as they are, and unknown marks some of the cost as unknown.
func (mt *Meter) AddSpent(u llm.Usage, costUSD float64, unknown bool) {
	mt.mu.Lock()
	mt.usage = mt.usage.Add(u)
	mt.pico = addSat(mt.pico, int64(math.Round(costUSD*1e12)))
	mt.unpriced = mt.unpriced || unknown
	mt.mu.Unlock()
}

// Total returns the running totals.
func (mt *Meter) Total() Totals {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return Totals{Usage: mt.usage, CostUSD: float64(mt.pico) / 1e12, CostUnknown: mt.unpriced}
}

// Reset sets the running totals to zero.
func (mt *Meter) Reset() {
	mt.mu.Lock()
	mt.usage = llm.Usage{}
	mt.pico = 0
	mt.unpriced = false
	mt.mu.Unlock()
}

// MeterState is a meter's running totals as a value that can be stored
// and carried elsewhere (a durable executor carries it from one model
// call to the next, each on an agent of its own).
type MeterState struct {
	Usage llm.Usage
	// Pico is the running cost in picodollars.
	Pico int64
	// Unpriced says some usage was of an unpriced model.
	Unpriced bool
}

// State returns the meter's running totals.
func (mt *Meter) State() MeterState {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return MeterState{Usage: mt.usage, Pico: mt.pico, Unpriced: mt.unpriced}
}

// Restore sets the running totals to s.
func (mt *Meter) Restore(s MeterState) {
	mt.mu.Lock()
	mt.usage, mt.pico, mt.unpriced = s.Usage, s.Pico, s.Unpriced
	mt.mu.Unlock()
}
