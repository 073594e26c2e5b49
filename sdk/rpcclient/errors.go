package rpcclient

import (
	"errors"

	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/wire"
)

// ErrClosed is returned for commands sent after [Client.Close]. It
// matches [client.ErrClosed] with errors.Is, as the in-process Runtime's
// does.
var ErrClosed error = closedError("rpcclient: client closed")

// closedError is ErrClosed's type: its own message, matching
// client.ErrClosed.
type closedError string

func (e closedError) Error() string { return string(e) }

// Is reports whether target is client.ErrClosed.
func (closedError) Is(target error) bool { return target == client.ErrClosed }

// ErrNotFound is Start's error when Options.Bin is empty, ZOT_BIN is
// unset and there is no zot on PATH.
var ErrNotFound = errors.New("rpcclient: zot not found: set Options.Bin, set ZOT_BIN, or put zot on PATH")

// ErrExited is returned (wrapped) for commands and streams that the process
// ended before answering, e.g. after a wrong hello token. The error says
// how zot exited and ends with the last lines of its stderr, which hold its
// reason: "rpcclient: zot exited (exit status 1): zot: no API key for …".
var ErrExited = errors.New("rpcclient: zot exited")

// Error is a command the server refused: a response with success false.
// Its Code is the server's stable error code; branch on it (errors.Is
// compares codes), not on Message. Error() returns "zot rpc <command>:
// <message> (<code>)".
type Error = wire.Error

// ErrBusy matches, with errors.Is, every busy answer: work or a change
// refused while a prompt or compaction runs or waits.
var ErrBusy = wire.ErrBusy

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

// Client is a [client.Client]: a program written against that interface
// drives zot in a subprocess through this package, or in its own process
// through package sdk, by changing one constructor.
var _ client.Client = (*Client)(nil)
