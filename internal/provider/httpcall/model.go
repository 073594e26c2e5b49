package httpcall

import (
	"context"
	"net/http"
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

// ModelCall is one streamed model call, as a provider describes it: what
// each attempt posts and how to read one. StreamModel does the rest.
type ModelCall struct {
	// Provider names the provider in errors.
	Provider string
	// URL, Header and Body are what each attempt posts (PostFrom).
	URL    string
	Header http.Header
	Body   Body
	// DecodeError reads the vendor's error type and message from an
	// error body; nil reads none.
	DecodeError func(status int, body []byte) (kind, message string)
	// Options are the call's: the attempt budget, backoff, the client.
	Options Options
	// Idle is an attempt's idle timeout when Options sets none (a call
	// that may think before its first byte waits longer); 0 keeps the
	// default.
	Idle time.Duration
	// Open, when set, posts one attempt in place of PostFrom, with opt
	// (Options.Once(Idle): the call owns the attempt budget): for a
	// vendor that says more in its error bodies than DecodeError returns.
	Open func(ctx context.Context, opt Options) (*Stream, error)
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
	once := call.Options.Once(call.Idle)
	var asm Assembler
	err := Call(ctx, call.Options, Attempt{
		Open: func(ctx context.Context) (*Stream, error) {
			asm = call.Assembler(sink)
			if call.Open != nil {
				return call.Open(ctx, once)
			}
			return PostFrom(ctx, call.Provider, call.URL, call.Header, call.Body, once, call.DecodeError)
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
