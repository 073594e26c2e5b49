package httpcall

import (
	"context"
	"errors"
)

// Attempt is what one try of a streaming model call does. Call runs it.
type Attempt struct {
	// Open sends the request and returns its stream. It must not retry on
	// its own (give Post Options with MaxAttempts 1): Call owns the budget.
	Open func(ctx context.Context) (*Stream, error)
	// Started is called once, when the first stream opens.
	Started func()
	// Read consumes the stream and reports whether any output went to the
	// caller; once it has, a failure is final.
	Read func(s *Stream) (reported bool, err error)
}

// Call runs a streaming model call with the retry policy of opt: a
// failure before any output was reported is retried like a failed
// request (see [Retry]); a failure after output is returned as is, since
// the caller has already shown part of an answer. Every stream is closed.
// After ctx is done the result is ctx's error.
func Call(ctx context.Context, opt Options, a Attempt) error {
	started := false
	err := Retry(ctx, opt, func(ctx context.Context) error {
		s, err := a.Open(ctx)
		if err != nil {
			return err
		}
		ended := false
		defer func() { s.finish(ended) }()
		if !started {
			started = true
			if a.Started != nil {
				a.Started()
			}
		}
		reported, err := a.Read(s)
		ended = err == nil
		if err != nil && reported {
			return final{err}
		}
		return err
	})
	var f final
	if errors.As(err, &f) {
		err = f.err
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// final hides an error from Retry's retryable check.
type final struct{ err error }

func (f final) Error() string { return f.err.Error() }
