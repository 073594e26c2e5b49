package llm

import (
	"errors"
	"fmt"
	"time"
)

// Error is a failure reported by a provider.
type Error struct {
	// Provider is the provider's id.
	Provider string
	// Status is the HTTP status, or 0 when the failure was not an HTTP
	// status (a mid-stream error event, a cut stream, a connect error).
	Status int
	// Kind is the provider's own error type when it sent one
	// ("overloaded_error", "rate_limit_exceeded", ...), or one of zot's:
	// "stream_cut" (the body ended before the format's end marker),
	// "idle_timeout" (no bytes for too long), "connect" (no connection).
	Kind string
	// Message is the provider's message. Error reports the text of an
	// encoding/json error in it in JSON words (see ErrorText).
	Message string
	// Retryable says whether the same request may succeed later.
	Retryable bool
	// RetryAfter is the delay the provider asked for, if it asked.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

// Error returns the message of the error.
func (e *Error) Error() string {
	msg := reword(e.Message, e.Err)
	switch {
	case e.Status != 0 && e.Kind != "":
		return fmt.Sprintf("%s: http %d %s: %s", e.Provider, e.Status, e.Kind, msg)
	case e.Status != 0:
		return fmt.Sprintf("%s: http %d: %s", e.Provider, e.Status, msg)
	case e.Kind != "":
		return fmt.Sprintf("%s: %s: %s", e.Provider, e.Kind, msg)
	}
	return fmt.Sprintf("%s: %s", e.Provider, msg)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether err is a provider error worth retrying.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}
