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
