package agent

import (
	"context"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/internal/provider/scripted"
	"zot.dev/zot/sdk/wire"
)

// TestUnpricedModelCostUnknown: the calls of a model without known prices
// report their cost as unknown (cost_unknown), not as free, and so does
// every later cumulative total.
func TestUnpricedModelCostUnknown(t *testing.T) {
	p := scripted.New(scripted.Config{Script: script(scripted.Step{Text: "ok", Usage: &llm.Usage{Input: 100, Output: 10}})})
	a := newAgent(t, p, func(c *Config) { c.Model = models.Builtin().Resolve("openai", "my-finetune") })
	rec := newRecorder(t)
	if err := a.Prompt(context.Background(), "hi", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	u := eventsOf[*wire.UsageEvent](rec)[0]
	if u.CostUnknown == nil || !*u.CostUnknown || u.CostUSD != 0 || u.Cumulative.CostUnknown == nil || !*u.Cumulative.CostUnknown {
		t.Errorf("usage %s", u.AppendJSON(nil))
	}
	// A priced model's usage carries no flag.
	a = newAgent(t, p, nil)
	rec = newRecorder(t)
	if err := a.Prompt(context.Background(), "hi", nil, rec.emit); err != nil {
		t.Fatal(err)
	}
	if u := eventsOf[*wire.UsageEvent](rec)[0]; u.CostUnknown != nil || u.Cumulative.CostUnknown != nil || u.CostUSD == 0 {
		t.Errorf("usage %s", u.AppendJSON(nil))
	}
}

// TestCallPricedOnItsDay: a model with an announced price change is priced
// at the prices of the day of the call.
func TestCallPricedOnItsDay(t *testing.T) {
	argon, _ := models.Builtin().Lookup("gemini", "gemini-4-argon")
	u := llm.Usage{Input: 1_000_000}
	for _, tc := range []struct {
		day  time.Time
		want float64
	}{
		{time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC), 2},
		{time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC), 4},
	} {
		p := scripted.New(scripted.Config{Script: script(scripted.Step{Text: "ok", Usage: &u})})
		a := newAgent(t, p, func(c *Config) { c.Model = argon; c.Now = func() time.Time { return tc.day } })
		rec := newRecorder(t)
		if err := a.Prompt(context.Background(), "hi", nil, rec.emit); err != nil {
			t.Fatal(err)
		}
		if got := eventsOf[*wire.UsageEvent](rec)[0].CostUSD; got != tc.want {
			t.Errorf("%s: cost %v, want %v", tc.day, got, tc.want)
		}
	}
}
