package httpcall

import (
	"context"
	"time"

	"zot.dev/zot/internal/llm"
)

// Assembler turns the stream of one attempt of a model call into events
// and a response: the part of a provider that knows its vendor's events.
// A new one reads each attempt.
type Assembler interface {
	// Run reads s to its end marker, reporting events as they arrive; it
	// returns the error that ended the stream early.
	Run(s *Stream) error
	// Reported says whether an event beyond llm.EventStart was reported:
	// a failure after one is final, since the caller has shown part of
	// an answer.
	Reported() bool
	// Response returns the response assembled so far.
	Response() *llm.Response
}

// ModelCall is one streamed model call, as a provider describes it: how to
// post an attempt and how to read one. StreamModel does the rest.
type ModelCall struct {
	// Options are the call's: the attempt budget, backoff, the client.
	Options Options
	// Open posts one attempt of the request (with options from
	// Options.Once: the call owns the attempt budget).
	Open func(ctx context.Context) (*Stream, error)
	// Assembler returns the assembler of a new attempt, which reports to
	// sink.
	Assembler func(sink llm.Sink) Assembler
}

// StreamModel makes call, reporting events to sink (nil discards them).
// Each attempt opens a stream and reads it with a new assembler;
// llm.EventStart is reported once, when the first stream opens; a
// retryable failure (an HTTP status, a connect error, a retryable error
// event, a cut or stalled stream) re-issues the whole call as long as
// nothing beyond EventStart was reported (see Call). On failure the
// response is what the last attempt assembled, with Stop error (aborted
// once ctx ended), and the error is Call's.
func StreamModel(ctx context.Context, call ModelCall, sink llm.Sink) (*llm.Response, error) {
	if sink == nil {
		sink = func(llm.Event) {}
	}
	var asm Assembler
	err := Call(ctx, call.Options, Attempt{
		Open: func(ctx context.Context) (*Stream, error) {
			asm = call.Assembler(sink)
			return call.Open(ctx)
		},
		Started: func() { sink(llm.Event{Kind: llm.EventStart}) },
		Read: func(s *Stream) (bool, error) {
			err := asm.Run(s)
			return asm.Reported(), err
		},
	})
	if err != nil {
		resp := Failed(asm)
		if ctx.Err() != nil {
			resp.Stop = llm.StopAborted
		}
		return resp, err
	}
	return asm.Response(), nil
}

// Failed returns the partial response of a failed call: what asm
// assembled, or an empty assistant message when no attempt began (asm
// nil), with Stop error.
func Failed(asm Assembler) *llm.Response {
	if asm == nil {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, Stop: llm.StopError}
	}
	resp := asm.Response()
	resp.Stop = llm.StopError
	return resp
}

// Once returns the options of one attempt of a call made with o:
// MaxAttempts 1 (StreamModel owns the budget), and idle as the idle
// timeout when o sets none and idle is positive (a call that may think
// before its first byte waits longer).
func (o Options) Once(idle time.Duration) Options {
	o.MaxAttempts = 1
	if idle > 0 && o.IdleTimeout == 0 {
		o.IdleTimeout = idle
	}
	return o
}
