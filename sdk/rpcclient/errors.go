package rpcclient

import (
	"errors"
	"fmt"

	"zot.dev/zot/sdk/wire"
)

// ErrClosed is returned for commands sent after [Client.Close].
var ErrClosed = errors.New("rpcclient: client closed")

// ErrExited is returned (wrapped) for commands and streams that the process
// ended before answering, e.g. after a wrong hello token.
var ErrExited = errors.New("rpcclient: zot exited")

// Error is a command the server refused: a response with success false.
type Error struct {
	// Code is the server's stable error code; branch on it, not on Message.
	Code wire.ErrorCode
	// Message is the server's one-line explanation.
	Message string
	// Command is the command's type, e.g. "set_model".
	Command string
}

// Error returns "zot rpc <command>: <message> (<code>)".
func (e *Error) Error() string {
	return fmt.Sprintf("zot rpc %s: %s (%s)", e.Command, e.Message, e.Code)
}

// errorOf turns a failed response into an *Error.
func errorOf(resp *wire.Response, command string) *Error {
	if resp.Command != "" {
		command = resp.Command
	}
	code := resp.Code
	if code == "" {
		code = wire.CodeInternal
	}
	return &Error{Code: code, Message: resp.Error, Command: command}
}
