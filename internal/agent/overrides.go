package agent

import (
	"context"
	"fmt"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/sdk/wire"
)

// Overrides change the model calls of one prompt without changing the
// agent: the zero value changes nothing. A prompt run under a context
// carrying them (WithOverrides) uses them for every model call it makes,
// corrective turns included when one Overrides value is passed to each.
type Overrides struct {
	// Model, when set, replaces the agent's model (same provider).
	Model *models.Model
	// Reasoning, when set, replaces the agent's reasoning level.
	Reasoning *string
	// MaxSteps, when above zero, replaces the agent's step limit.
	MaxSteps int
	// MaxTokens, when above zero, replaces the output limit of each call.
	MaxTokens int
	// MaxCostUSD, when above zero, is the cost budget of the prompt: once
	// its model calls cost that much, the prompt ends after the call that
	// reached it, with a turn_end of stop max_cost. Calls of a model
	// without prices do not count against it.
	MaxCostUSD float64
	// Joint, when set, says why a cost budget the prompt shares with
	// another is spent, "" while it is not: a sub-agent's prompt is held
	// to the budget of the prompt that started it, whose meter counts
	// what the sub-agent spends.
	Joint func() string

	// based is set once the cost of the agent's meter before the prompt's
	// first model call is in base; prompts run one at a time, so the
	// goroutine running them alone touches these.
	based bool
	base  float64
}

// overridesKey keys a prompt's overrides in its context.
type overridesKey struct{}

// WithOverrides returns ctx carrying o for the prompt run under it. The
// same *Overrides given to several Prompt calls holds them to one cost
// budget together.
func WithOverrides(ctx context.Context, o *Overrides) context.Context {
	return context.WithValue(ctx, overridesKey{}, o)
}

// overridesOf returns the overrides ctx carries, or nil.
func overridesOf(ctx context.Context) *Overrides {
	o, _ := ctx.Value(overridesKey{}).(*Overrides)
	return o
}

// startBudget notes what the agent's meter has cost before the prompt's
// first model call, so that the budget counts the prompt's calls alone.
func (a *Agent) startBudget(o *Overrides) {
	if o == nil || o.based || o.MaxCostUSD <= 0 {
		return
	}
	o.based, o.base = true, a.meter.Total().CostUSD
}

// overBudget says why the prompt's cost budget is spent, "" while it is
// not (or there is none, or the model's prices are unknown).
func (a *Agent) overBudget(o *Overrides) string {
	if o == nil {
		return ""
	}
	if o.Joint != nil {
		if why := o.Joint(); why != "" {
			return why
		}
	}
	if o.MaxCostUSD <= 0 {
		return ""
	}
	t := a.meter.Total()
	if t.CostUnknown {
		return ""
	}
	if spent := t.CostUSD - o.base; spent >= o.MaxCostUSD {
		return fmt.Sprintf("the prompt's cost budget ($%.4f) is spent: $%.4f", o.MaxCostUSD, spent)
	}
	return ""
}

// OverBudget says why the cost budget of the prompt running under ctx is
// spent, "" while it is not (or it has none).
func (a *Agent) OverBudget(ctx context.Context) string {
	return a.overBudget(overridesOf(ctx))
}

// AddUsage adds usage spent on the agent's behalf by model calls it did
// not make (its sub-agents') to its running totals: Usage reports it, and
// the cost budget of the prompt running now counts it.
func (a *Agent) AddUsage(u wire.Usage) {
	unknown := u.CostUnknown != nil && *u.CostUnknown
	a.meter.AddSpent(llm.Usage{Input: int(u.Input), Output: int(u.Output), CacheRead: int(u.CacheRead), CacheWrite: int(u.CacheWrite)}, u.CostUSD, unknown)
}

// modelFor returns the model and reasoning level of a model call of the
// prompt run under ctx.
func (a *Agent) modelFor(ctx context.Context) (models.Model, string) {
	m, level := a.Model(), a.Reasoning()
	if o := overridesOf(ctx); o != nil {
		if o.Model != nil {
			m = *o.Model
		}
		if o.Reasoning != nil {
			level = *o.Reasoning
		}
	}
	return m, level
}

// MaxSteps returns the step limit of a prompt without an override.
func (a *Agent) MaxSteps() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.maxSteps
}

// SetMaxSteps sets the step limit of the prompts that start from now on;
// n must be at least 1.
func (a *Agent) SetMaxSteps(n int) error {
	if n < 1 {
		return fmt.Errorf("agent: max steps must be at least 1, not %d", n)
	}
	a.mu.Lock()
	a.maxSteps = n
	a.mu.Unlock()
	return nil
}
