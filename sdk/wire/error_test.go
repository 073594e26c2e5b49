package wire

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorIsComparesCodes(t *testing.T) {
	cause := errors.New("socket closed")
	busy := &Error{Code: CodeBusy, Message: "clear: a prompt or compact is running or queued", Command: "clear"}
	wrapped := fmt.Errorf("resetting: %w", busy)
	if !errors.Is(wrapped, ErrBusy) {
		t.Error("a wrapped busy answer does not match ErrBusy")
	}
	if errors.Is(&Error{Code: CodeUnknownModel}, ErrBusy) {
		t.Error("another code matches ErrBusy")
	}
	withCause := &Error{Code: CodeProviderError, Err: cause}
	if !errors.Is(withCause, cause) || withCause.Error() != "socket closed" {
		t.Errorf("cause: %v, %q", errors.Is(withCause, cause), withCause.Error())
	}
	if got := busy.Error(); got != "zot rpc clear: clear: a prompt or compact is running or queued (busy)" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&Error{Code: CodeInternal}).Error(); got != "internal" {
		t.Errorf("bare Error() = %q", got)
	}
}

// modelError is a typed error of another package that carries its code.
type modelError struct{ id string }

func (e *modelError) Error() string        { return "unknown model " + e.id }
func (e *modelError) ErrorCode() ErrorCode { return CodeUnknownModel }

func TestCodeOf(t *testing.T) {
	notFound := &Error{Code: CodeNotFound, Message: "no such thing"}
	for _, tc := range []struct {
		name string
		err  error
		want ErrorCode
	}{
		{"nil", nil, ""},
		{"the sentinel", ErrBusy, CodeBusy},
		{"a sentinel wrapped with %w", fmt.Errorf("clear: %w", ErrBusy), CodeBusy},
		{"a sentinel wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", notFound)), CodeNotFound},
		{"a typed error", &modelError{"x"}, CodeUnknownModel},
		{"a typed error wrapped", fmt.Errorf("set_model: %w", &modelError{"x"}), CodeUnknownModel},
		{"the outermost code wins", &Error{Code: CodeProviderError, Err: notFound}, CodeProviderError},
		{"a joined error: the first with a code", errors.Join(errors.New("plain"), notFound), CodeNotFound},
		{"an *Error without a code looks further", &Error{Err: notFound}, CodeNotFound},
		{"an error without a code", errors.New("disk on fire"), CodeInternal},
		{"an *Error without a code and no cause", &Error{Message: "x"}, CodeInternal},
	} {
		if got := CodeOf(tc.err); got != tc.want {
			t.Errorf("%s: CodeOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSentinel(t *testing.T) {
	a := Sentinel(CodeNotFound, "no such command")
	b := Sentinel(CodeNotFound, "no such server")
	wrapped := fmt.Errorf("%w: %q", a, "deploy")
	if CodeOf(wrapped) != CodeNotFound || wrapped.Error() != `no such command: "deploy"` {
		t.Errorf("wrapped sentinel: %q, %q", CodeOf(wrapped), wrapped)
	}
	if !errors.Is(wrapped, a) || errors.Is(wrapped, b) || errors.Is(wrapped, &Error{Code: CodeNotFound}) {
		t.Error("a sentinel matches something other than itself")
	}
}
