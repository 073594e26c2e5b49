package engine

import (
	"fmt"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/sdk/wire"
)

// PromptOverrides change one prompt's model calls, not the session: a
// zero field keeps the session's.
type PromptOverrides struct {
	// Model is a model id of the session's provider.
	Model string
	// Reasoning is a reasoning level the prompt's model takes; nil keeps
	// the session's.
	Reasoning *string
	// MaxSteps bounds the prompt's model calls.
	MaxSteps int
	// MaxTokens is the output limit of each of its model calls.
	MaxTokens int
	// MaxCostUSD is its cost budget, instead of the session's.
	MaxCostUSD float64
}

// SetOverrides sets the prompt's overrides from a door's fields, checking
// their ranges (invalid_params past them). The model and the reasoning
// level are checked when the prompt is submitted.
func (in *PromptInput) SetOverrides(model string, reasoning *string, maxSteps, maxTokens *int64, maxCost *float64) error {
	o := PromptOverrides{Model: model, Reasoning: reasoning}
	if maxSteps != nil {
		if *maxSteps < 1 || *maxSteps > 10000 {
			return &agent.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("max_steps must be from 1 to 10000, not %d", *maxSteps)}
		}
		o.MaxSteps = int(*maxSteps)
	}
	if maxTokens != nil {
		if *maxTokens < 1 || *maxTokens > 10_000_000 {
			return &agent.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("max_tokens must be from 1 to 10000000, not %d", *maxTokens)}
		}
		o.MaxTokens = int(*maxTokens)
	}
	if maxCost != nil {
		if !(*maxCost > 0) {
			return &agent.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("max_cost_usd must be above 0, not %v", *maxCost)}
		}
		o.MaxCostUSD = *maxCost
	}
	in.Overrides = o
	return nil
}

// overrides turns a prompt's overrides into the agent's, resolving the
// model in the session's catalog; nil when the prompt changes nothing.
// A level the model does not take is an invalid_params error naming
// those it takes; a model id the catalog does not know is taken, as
// SetModel takes it.
func (s *Session) overrides(p PromptOverrides) (*agent.Overrides, error) {
	s.mu.Lock()
	budget := s.maxCost
	s.mu.Unlock()
	if p.MaxCostUSD > 0 {
		budget = p.MaxCostUSD
	}
	joint := s.agents.joint // a child's: the budget of the prompt that started it
	if p == (PromptOverrides{}) && budget == 0 && joint == nil {
		return nil, nil
	}
	o := &agent.Overrides{MaxSteps: p.MaxSteps, MaxTokens: p.MaxTokens, MaxCostUSD: budget, Joint: joint}
	if p.Model != "" || p.Reasoning != nil {
		m, level := s.agent.Model(), s.agent.Reasoning()
		if p.Model != "" {
			m = s.catalog.Resolve(s.provider, p.Model)
		}
		if p.Reasoning != nil {
			level = *p.Reasoning
		}
		if err := m.TakesEffort(level); err != nil {
			return nil, &agent.Error{Code: wire.CodeInvalidParams, Message: "reasoning: " + err.Error()}
		}
		o.Model, o.Reasoning = &m, &level
	}
	return o, nil
}

// Defaults are the session's prompt defaults: what a prompt uses when it
// does not override it. They are not config.json's settings: they live as
// long as the session and start from its SessionConfig.
type Defaults struct {
	// Model is the model id.
	Model string
	// Reasoning is the reasoning level, "" for the model's default.
	Reasoning string
	// MaxSteps bounds the model calls of one prompt.
	MaxSteps int
	// MaxCostUSD is the cost budget of one prompt, 0 for none.
	MaxCostUSD float64
}

// Defaults returns the session's prompt defaults.
func (s *Session) Defaults() Defaults {
	s.mu.Lock()
	budget := s.maxCost
	s.mu.Unlock()
	return Defaults{Model: s.agent.Model().ID, Reasoning: s.agent.Reasoning(), MaxSteps: s.agent.MaxSteps(), MaxCostUSD: budget}
}

// SetDefaults replaces the session's prompt defaults with d, all or
// nothing: an empty model is an *UnknownModelError, a level the model
// does not take a *ReasoningError, a number out of range invalid_params,
// and it fails with busy while work runs or waits.
func (s *Session) SetDefaults(d Defaults) error {
	if d.MaxSteps < 1 || d.MaxSteps > 10000 {
		return &agent.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("max_steps must be from 1 to 10000, not %d", d.MaxSteps)}
	}
	if !(d.MaxCostUSD >= 0) || d.MaxCostUSD > 1e9 {
		return &agent.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("max_cost_usd must be 0 or more, not %v", d.MaxCostUSD)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idleLocked(); err != nil {
		return err
	}
	if d.Model == "" {
		return &UnknownModelError{Provider: s.provider}
	}
	m := s.catalog.Resolve(s.provider, d.Model)
	if err := m.TakesEffort(d.Reasoning); err != nil {
		return &ReasoningError{Err: err}
	}
	if err := s.agent.SetModelReasoning(m, d.Reasoning); err != nil {
		return err
	}
	if err := s.agent.SetMaxSteps(d.MaxSteps); err != nil {
		return err
	}
	s.maxCost = d.MaxCostUSD
	return nil
}
