package agent

import (
	"context"
	"errors"

	"zot.dev/zot/internal/compact"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models"
	"zot.dev/zot/sdk/wire"
)

// Compact summarises the older messages of the transcript into one,
// keeping a recent tail (see package compact), with the user's extra
// instructions for the summary (blank means none). It emits one usage
// event, the sum of every summarising call (a long transcript is
// summarised in chunks, then merged), and then compact_done; the caller
// writes done. The transcript changes only when compaction succeeds.
//
// It returns an error satisfying IsAborted after ctx ended (having emitted
// the usage of the calls made so far, if any, and turn_end{stop:"aborted"},
// as a prompt does), an *Error with code
// invalid_params when there is nothing to compact (the transcript is no
// longer than the kept tail), an *Error with code provider_error when a
// summarising call failed.
func (a *Agent) Compact(ctx context.Context, instructions string, emit func(wire.Event)) error {
	return a.newRun(ctx, emit).compact(instructions)
}

// autoCompact compacts the transcript when the last model call's context
// (input, cache and output tokens) exceeds the threshold share of the
// model's context window, or a step of the prompt stopped at the context
// window itself. Nothing to compact is not an error here.
func (p *promptRun) autoCompact() error {
	a := p.a
	if a.autoOff {
		return nil
	}
	a.mu.Lock()
	used, window := a.context, a.model.ContextWindow
	a.mu.Unlock()
	if !p.contextFull && (window <= 0 || float64(used) <= a.threshold*float64(window)) {
		return nil
	}
	err := p.compact("")
	switch {
	case err == nil || IsAborted(err):
		return err
	case errors.Is(err, compact.ErrNothingToCompact):
		return nil
	}
	code := wire.CodeInternal
	var ae *Error
	if errors.As(err, &ae) {
		code = ae.Code
	}
	return &Error{Code: code, Message: "automatic compaction failed: " + errLine(err), Err: err}
}

// compact runs one compaction and replaces the transcript with its result.
// Whatever the outcome, the summarising calls that reached the provider
// are reported in one usage event, their sum; each is added to the
// running totals as it ends, so the totals are current while the
// compaction runs and count a call even if a later one fails.
func (r *run) compact(instructions string) error {
	a := r.a
	msgs := a.snapshot()
	model := a.Model()
	var (
		calls int
		sum   llm.Usage
		total models.Totals
	)
	res, err := compact.Compact(r.ctx, msgs, compact.Options{
		Provider:     compactionProvider{a},
		Model:        model,
		Instructions: instructions,
		KeepTail:     a.keepTail,
		Now:          a.timeNow,
		OnCall: func(u llm.Usage) {
			calls++
			sum = sum.Add(u)
			_, total = a.meter.Add(a.priced(model), u)
		},
	})
	if calls > 0 {
		// Costs are linear in tokens, so the sum's cost is the sum of
		// the calls' costs, to the picodollar.
		r.emit(usageEvent(models.Totals{Usage: sum, CostUSD: a.priced(model).Cost(sum), CostUnknown: model.Unpriced}, total))
	}
	if err != nil {
		if r.ctx.Err() != nil {
			return r.abort()
		}
		if errors.Is(err, compact.ErrNothingToCompact) {
			return &Error{Code: wire.CodeInvalidParams, Message: errLine(err), Err: err}
		}
		var le *llm.Error
		if errors.As(err, &le) || errors.Is(err, compact.ErrEmptySummary) {
			return providerError(err)
		}
		return &Error{Code: wire.CodeInternal, Message: errLine(err), Err: err}
	}
	a.mu.Lock()
	a.msgs = res.Messages
	a.gen++
	a.context = 0
	a.resetBound()
	a.mu.Unlock()
	before, after := int64(len(msgs)), int64(len(res.Messages))
	r.emit(&wire.CompactDoneEvent{Summary: res.Summary, MessagesBefore: &before, MessagesAfter: &after})
	return nil
}
