package sdk

import (
	"context"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/wire"
)

// ErrNoSessionStore is the error of the session methods of a Runtime
// whose Config names no SessionStore (code invalid_params): the SDK
// keeps no sessions unless told where.
var ErrNoSessionStore = wire.Sentinel(wire.CodeInvalidParams, "zot: the Runtime has no session store: set Config.SessionStore")

// store is the Runtime's session store.
func (r *Runtime) store(ctx context.Context) (*store.Store, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	if r.sessions == nil {
		return nil, ErrNoSessionStore
	}
	return r.sessions()
}

// ListSessions lists the sessions of Config.SessionStore, newest first, as
// zot rpc's list_sessions does; cwd, when not empty, keeps those of that
// working directory. The Runtime's own session is marked Current.
func (r *Runtime) ListSessions(ctx context.Context, cwd string) ([]wire.SessionInfo, error) {
	st, err := r.store(ctx)
	if err != nil {
		return nil, err
	}
	return r.sess.ListStored(ctx, st, cwd)
}

// LoadSession makes stored session id the Runtime's, as load_session
// does: its transcript replaces the one in memory and later messages go
// to its file. It returns ErrBusy while work runs, and errors of code
// not_found (no such session) and session_locked (another process has it
// open).
func (r *Runtime) LoadSession(ctx context.Context, id string) (wire.SessionInfo, error) {
	st, err := r.store(ctx)
	if err != nil {
		return wire.SessionInfo{}, err
	}
	info, err := r.sess.LoadStored(ctx, st, id)
	return info, r.mapErr(err)
}

// ForkSession forks a stored session before one of its user prompts, as
// fork_session does: cmd.SessionID (default the Runtime's own),
// cmd.AtIndex or cmd.AtMessageID (default the last prompt), loaded
// unless cmd.Load is false. The result holds the fork and the prompt it
// left out.
func (r *Runtime) ForkSession(ctx context.Context, cmd wire.ForkSessionCommand) (*wire.ForkSessionResult, error) {
	st, err := r.store(ctx)
	if err != nil {
		return nil, err
	}
	at, err := engine.ForkPointOf(cmd.AtIndex, cmd.AtMessageID)
	if err != nil {
		return nil, err
	}
	res, err := r.sess.ForkStored(ctx, st, cmd.SessionID, at, cmd.Load == nil || *cmd.Load)
	if err != nil {
		return nil, r.mapErr(err)
	}
	return &res, nil
}
