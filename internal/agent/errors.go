package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/sdk/wire"
)

// Error is a failure of a prompt or compaction, with the stable code the
// wire's error event carries: wire.CodeProviderError, wire.CodeMaxSteps,
// wire.CodeInvalidParams, wire.CodeBlocked (an interceptor refused) or
// wire.CodeInternal. Use errors.As to get it from what Prompt and Compact
// return; the underlying cause (an *llm.Error from a provider, for
// example) is reachable through errors.As/Is as well.
type Error = wire.Error

// ErrAborted is what errors.Is matches for any error that reports an
// abort. Such an error also matches the context's own error
// (context.Canceled, or context.DeadlineExceeded for a deadline).
var ErrAborted = errors.New("aborted")

// abortError reports that the work stopped because its context ended.
type abortError struct {
	ctxErr error // ctx.Err()
	cause  error // context.Cause(ctx), which may be the caller's own error
}

func (e *abortError) Error() string        { return "aborted: " + e.cause.Error() }
func (e *abortError) Is(target error) bool { return target == ErrAborted }

// Unwrap returns the context's error and, when the context was cancelled
// with a cause of its own, that cause.
func (e *abortError) Unwrap() []error {
	if e.cause == e.ctxErr {
		return []error{e.ctxErr}
	}
	return []error{e.ctxErr, e.cause}
}

// aborted returns the error reporting that ctx ended.
func aborted(ctx context.Context) error {
	ctxErr := ctx.Err()
	if ctxErr == nil {
		ctxErr = context.Canceled
	}
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctxErr
	}
	return &abortError{ctxErr: ctxErr, cause: cause}
}

// abortReason is the text turn_end carries for an abort.
func abortReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil {
		return errLine(cause)
	}
	return context.Canceled.Error()
}

// IsAborted reports whether err says the work was aborted (its context was
// cancelled or ran out of time), as opposed to having failed. An aborted
// prompt ends with turn_end{stop:"aborted"} and gets no error event.
func IsAborted(err error) bool {
	return errors.Is(err, ErrAborted) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// providerError wraps a provider failure.
func providerError(err error) *Error {
	return &Error{Code: wire.CodeProviderError, Message: errLine(err), Err: err}
}

// errLine is the message of err as clients read it: on one line, and with
// encoding/json's wording, which names Go types, in JSON terms naming the
// field (see llm.ErrorText). Every error text the agent reports (error
// events, turn_end, tool results) goes through it or llm.ErrorText.
func errLine(err error) string { return oneLine(llm.ErrorText(err)) }

// panicText is the message of a recovered panic value, worded as
// llm.ErrorText words errors.
func panicText(v any) string {
	err, ok := v.(error)
	if !ok {
		err = fmt.Errorf("%v", v)
	}
	return llm.ErrorText(err)
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ").Replace(s)), " ")
}
