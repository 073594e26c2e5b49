package acpserver

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestUsageCostLeftOutWhenUnknown: usage_update carries the session's cost
// only when it is known whole. A total that includes calls of a model
// without known prices (a model switched to mid-session, say) is only a
// part of the cost, and ACP's cost cannot say so: it is left out rather
// than shown as the total.
func TestUsageCostLeftOutWhenUnknown(t *testing.T) {
	unknown := true
	tr := &turn{contextSz: 200_000}
	for _, c := range []struct {
		name     string
		cum      wire.Usage
		wantCost float64 // 0: no cost
	}{
		{"priced", wire.Usage{Input: 10, CostUSD: 0.25}, 0.25},
		{"unpriced alone", wire.Usage{Input: 10, CostUnknown: &unknown}, 0},
		{"priced and unpriced", wire.Usage{Input: 20, CostUSD: 0.25, CostUnknown: &unknown}, 0},
	} {
		u := tr.usage(&wire.UsageEvent{Input: 10, Output: 5, Cumulative: c.cum})
		if u.Used != 15 || u.Size != 200_000 {
			t.Errorf("%s: used %d size %d", c.name, u.Used, u.Size)
		}
		if tok, _ := u.Meta["zot"].(map[string]any)["tokens"].(map[string]int64); tok["input"] != c.cum.Input || tok["output"] != c.cum.Output {
			t.Errorf("%s: _meta %v, want the session's tokens %+v", c.name, u.Meta, c.cum)
		}
		switch {
		case c.wantCost == 0 && u.Cost != nil:
			t.Errorf("%s: cost %+v, want none", c.name, *u.Cost)
		case c.wantCost != 0 && (u.Cost == nil || u.Cost.Amount != c.wantCost || u.Cost.Currency != "USD"):
			t.Errorf("%s: cost %+v, want %v USD", c.name, u.Cost, c.wantCost)
		}
	}
}
