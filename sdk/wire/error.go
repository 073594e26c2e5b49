package wire

import "strings"

// Error is a failure that carries one of the protocol's stable error
// codes. It is what a failed response says, and what the SDK, the rpc
// client and zot's engine return: branch on Code (errors.Is compares codes:
// errors.Is(err, wire.ErrBusy) holds for every busy error, whoever made
// it), not on Message.
type Error struct {
	// Code is the stable error code.
	Code ErrorCode
	// Message says what went wrong, on one line.
	Message string
	// Command is the type of the command that failed, when the error is
	// a response to one (as the rpc client reports it).
	Command string
	// Err is the cause, if any.
	Err error
}

// Error returns the message, prefixed with the command and followed by
// the code when the error answers a command: "zot rpc <command>:
// <message> (<code>)".
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = strings.Join(strings.Fields(e.Err.Error()), " ")
	}
	if msg == "" {
		msg = string(e.Code)
	}
	if e.Command != "" {
		return "zot rpc " + e.Command + ": " + msg + " (" + string(e.Code) + ")"
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// ErrBusy is the error of work refused because other work runs or waits,
// and of a change (clear, set_model) refused while it does. Every busy
// error matches it with errors.Is.
var ErrBusy = &Error{Code: CodeBusy, Message: "zot: a prompt or compaction is already running"}
