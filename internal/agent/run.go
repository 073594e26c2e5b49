package agent

import (
	"context"
	"sync"

	"zot.dev/zot/sdk/wire"
)

// run is one prompt or compaction in progress: its context and its event
// sink.
type run struct {
	a   *Agent
	ctx context.Context

	emitMu sync.Mutex
	sink   func(wire.Event)
}

func (a *Agent) newRun(ctx context.Context, emit func(wire.Event)) *run {
	return &run{a: a, ctx: ctx, sink: emit}
}

// emit hands ev to the caller's sink. Calls are serialised, so tool
// progress reported from a tool's own goroutine never interleaves with
// the agent's events.
func (r *run) emit(ev wire.Event) {
	if r.sink == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.sink(ev)
}

// turnEnd emits turn_end.
func (r *run) turnEnd(stop wire.StopReason, msg string) {
	r.emit(&wire.TurnEndEvent{Stop: stop, Error: msg})
}

// turnEndReason emits turn_end with the provider's reason for the stop.
func (r *run) turnEndReason(stop wire.StopReason, reason string) {
	r.emit(&wire.TurnEndEvent{Stop: stop, Reason: reason})
}

// abort ends the work after its context ended: turn_end{stop:"aborted"}
// and the error Prompt or Compact returns.
func (r *run) abort() error {
	r.turnEnd(wire.StopAborted, abortReason(r.ctx))
	return aborted(r.ctx)
}
