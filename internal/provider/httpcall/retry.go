package httpcall

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"zot.dev/zot/internal/llm"
)

// Retry runs attempt up to opt.MaxAttempts times with the same backoff policy
// as [Post], while attempt returns an error for which llm.IsRetryable is true
// and ctx is live. Providers use it to re-issue a whole call when a retryable
// error (e.g. an `overloaded_error` SSE event) arrives BEFORE anything was
// reported to the caller.
//
// Between attempts it waits for the error's RetryAfter when the error is an
// *llm.Error that carries one, or else for a jittered exponential delay. A
// RetryAfter longer than 4*MaxDelay ends the retries with that error. The
// last error is returned as is; after ctx is done the result is ctx's error.
func Retry(ctx context.Context, opt Options, attempt func(ctx context.Context) error) error {
	opt = opt.withDefaults()
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(err, cerr) {
				return err
			}
			return cerr
		}
		if n >= opt.MaxAttempts || !llm.IsRetryable(err) {
			return err
		}
		d, ok := opt.delay(err, n)
		if !ok {
			return err
		}
		if serr := opt.Sleep(ctx, d); serr != nil {
			return serr
		}
	}
}

// delay returns how long to wait after the n-th failed attempt (n from 1),
// and false when the server asked for a delay too long to wait for.
func (o Options) delay(err error, n int) (time.Duration, bool) {
	var e *llm.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		if e.RetryAfter > 4*o.MaxDelay {
			return 0, false
		}
		return e.RetryAfter, true
	}
	return o.backoff(n), true
}

// backoff is full-jitter exponential backoff: a uniform delay in
// [0, min(MaxDelay, BaseDelay*2^(n-1))].
func (o Options) backoff(n int) time.Duration {
	ceil := o.MaxDelay
	if shift := n - 1; shift < 62 {
		if d := o.BaseDelay << shift; d > 0 && d>>shift == o.BaseDelay && d < ceil {
			ceil = d
		}
	}
	return rand.N(ceil + 1)
}
