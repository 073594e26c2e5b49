package acpserver

import (
	"errors"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/checkpoint"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	zsession "zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/sdk/wire"
)

// errorOf is the JSON-RPC error this door answers an error of the engine
// or of the session store with: the one place that maps them. An error
// that is a *jsonrpc.Error already passes as it is; the session store's
// errors have kinds of their own; anything else goes by its protocol
// code (wire.CodeOf, see fromCode). sessionID, when not empty, names the
// session in data.sessionId; field names the request member an
// invalid_params error is about.
func (a *Agent) errorOf(err error, sessionID, field string) *jsonrpc.Error {
	var je *jsonrpc.Error
	var conflict *checkpoint.ConflictError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &je):
		return je
	case errors.Is(err, zsession.ErrLocked):
		return appError(acp.ErrorKindSessionLocked, sessionID, "%v", err)
	case errors.Is(err, zsession.ErrCorrupt):
		return corruptError(sessionID, err)
	case errors.As(err, &conflict):
		return appError(acp.ErrorKindChangedOutside, sessionID, "%v", err).With("file", conflict.Path)
	case errors.Is(err, engine.ErrClosed) && a.isClosed():
		// The daemon is stopping: the session still exists in its file.
		return withSession(jsonrpc.NewError(jsonrpc.CodeCancelled, jsonrpc.KindCancelled, "the daemon is shutting down"), sessionID)
	case errors.Is(err, engine.ErrClosed) && sessionID == "":
		return appError(acp.ErrorKindUnknownSession, "", "the session is closed")
	case errors.Is(err, engine.ErrClosed):
		return appError(acp.ErrorKindUnknownSession, sessionID, "session %s is closed", sessionID)
	}
	return fromCode(wire.CodeOf(err), sessionID, field, err.Error())
}

// fromCode is the JSON-RPC error of a protocol error code (a failed call's,
// or a turn's error event's), with message msg.
func fromCode(code wire.ErrorCode, sessionID, field, msg string) *jsonrpc.Error {
	switch code {
	case wire.CodeBusy:
		return appError(acp.ErrorKindBusy, sessionID, "session %s runs a prompt or compaction; send again after its answer", sessionID)
	case wire.CodeProviderError:
		return appError(acp.ErrorKindProviderError, sessionID, "%s", msg)
	case wire.CodeLimitExceeded:
		return appError(acp.ErrorKindLimitExceeded, sessionID, "%s", msg)
	case wire.CodeInvalidParams, wire.CodeUnknownModel, wire.CodeInvalidImage:
		// The request cannot be served as it stands: the client's to
		// change, not a fault inside zot.
		return withSession(jsonrpc.InvalidParams(field, "%s", msg), sessionID)
	}
	return appError(acp.ErrorKindInternal, sessionID, "%s", msg)
}

// appError is an error answer of kind, about session sessionID.
func appError(kind acp.ErrorKind, sessionID, format string, args ...any) *jsonrpc.Error {
	return withSession(jsonrpc.NewError(int64(kind.Code()), string(kind), format, args...).WithRetryable(kind.Retryable()), sessionID)
}

// withSession names session sessionID, when not empty, in e's data.
func withSession(e *jsonrpc.Error, sessionID string) *jsonrpc.Error {
	if sessionID != "" {
		e = e.With("sessionId", sessionID)
	}
	return e
}
