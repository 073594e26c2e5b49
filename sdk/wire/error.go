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

// ErrorCode returns the code: an *Error is a [Coded] error.
func (e *Error) ErrorCode() ErrorCode { return e.Code }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// ErrBusy is the error of work refused because other work runs or waits,
// and of a change (clear, set_model) refused while it does. Every busy
// error matches it with errors.Is.
var ErrBusy = &Error{Code: CodeBusy, Message: "zot: a prompt or compaction is already running"}

// Coded is an error that carries one of the protocol's codes. *Error is
// one; a package's own typed errors (an unknown model, a level a model
// does not take) implement it, so [CodeOf] finds their code wherever
// they are wrapped. A sentinel that is an *Error (such as [ErrBusy])
// gives its code to every error that wraps it with %w.
type Coded interface {
	error
	ErrorCode() ErrorCode
}

// Sentinel returns a sentinel error of a package, with message msg, that
// carries code for [CodeOf] and, unlike an *Error, matches only itself
// with errors.Is: two packages' not_found sentinels stay apart.
func Sentinel(code ErrorCode, msg string) error { return &sentinel{code: code, msg: msg} }

type sentinel struct {
	code ErrorCode
	msg  string
}

func (s *sentinel) Error() string        { return s.msg }
func (s *sentinel) ErrorCode() ErrorCode { return s.code }

// CodeOf returns the code of err: that of the outermost error in its
// chain that carries one (see [Coded]); "" for nil; and [CodeInternal] for
// an error that carries none, which is a fault nobody foresaw. Every door
// maps an error to its answer through CodeOf, so one error gets one code
// whichever door reports it.
func CodeOf(err error) ErrorCode {
	if err == nil {
		return ""
	}
	if code := codeIn(err); code != "" {
		return code
	}
	return CodeInternal
}

// codeIn walks err's chain depth first, as errors.As does, for the first
// error with a code; one whose code is empty does not stop the walk.
func codeIn(err error) ErrorCode {
	for err != nil {
		if c, ok := err.(Coded); ok {
			if code := c.ErrorCode(); code != "" {
				return code
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if code := codeIn(e); code != "" {
					return code
				}
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}
