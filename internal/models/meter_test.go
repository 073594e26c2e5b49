package models

import (
	"sync"
	"testing"

	"zot.dev/zot/internal/llm"
)

func TestMeterAdd(t *testing.T) {
	var mt Meter
	m, _ := Builtin().Lookup("anthropic", "claude-sonnet-5-5")
	u1 := llm.Usage{Input: 1000, Output: 200}
	turn, total := mt.Add(m, u1)
	if turn.Usage != u1 || turn.CostUSD != 0.004 || total != turn {
		t.Errorf("first add: turn %+v total %+v", turn, total)
	}
	u2 := llm.Usage{Input: 10, CacheRead: 5000, CacheWrite: 400}
	turn, total = mt.Add(m, u2)
	if turn.Usage != u2 || turn.CostUSD != 0.00152 {
		t.Errorf("second turn %+v", turn)
	}
	want := Totals{Usage: llm.Usage{Input: 1010, Output: 200, CacheRead: 5000, CacheWrite: 400}, CostUSD: 0.00552}
	if total != want || mt.Total() != want {
		t.Errorf("total %+v / %+v, want %+v", total, mt.Total(), want)
	}
	mt.Reset()
	if mt.Total() != (Totals{}) {
		t.Errorf("after Reset: %+v", mt.Total())
	}
}

func TestMeterSumIsExact(t *testing.T) {
	// Adding $0.000005 a thousand times in float64 drifts; the meter does not.
	var mt Meter
	m := Model{Output: 5}
	for range 1000 {
		mt.Add(m, llm.Usage{Output: 1})
	}
	if got := mt.Total().CostUSD; got != 0.005 {
		t.Errorf("total %.17g, want 0.005", got)
	}
}

func TestMeterConcurrentAdds(t *testing.T) {
	var mt Meter
	c := Builtin()
	models := []Model{}
	for _, id := range []string{"claude-opus-5-5", "claude-haiku-5-5", "scripted"} {
		p := "anthropic"
		if id == "scripted" {
			p = "scripted"
		}
		m, _ := c.Lookup(p, id)
		models = append(models, m)
	}
	u := llm.Usage{Input: 7, Output: 3, CacheRead: 11, CacheWrite: 2}
	const workers, adds = 8, 300
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range adds {
				turn, total := mt.Add(models[(w+i)%len(models)], u)
				if turn.Usage != u || total.CostUSD < turn.CostUSD {
					t.Errorf("turn %+v total %+v", turn, total)
					return
				}
				_ = mt.Total()
			}
		}()
	}
	wg.Wait()
	n := workers * adds
	got := mt.Total()
	wantUsage := llm.Usage{Input: 7 * n, Output: 3 * n, CacheRead: 11 * n, CacheWrite: 2 * n}
	if got.Usage != wantUsage {
		t.Errorf("usage %+v, want %+v", got.Usage, wantUsage)
	}
	// Each worker cycles the three models; count the calls per model.
	var pico int64
	for w := range workers {
		for i := range adds {
			pico += models[(w+i)%len(models)].costPico(u)
		}
	}
	if want := float64(pico) / 1e12; got.CostUSD != want {
		t.Errorf("cost %.17g, want %.17g", got.CostUSD, want)
	}
}
