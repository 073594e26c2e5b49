package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/sdk/wire"
)

// The session store's commands (list_sessions, load_session,
// fork_session) as every door serves them: a door decodes, calls these
// with the store it uses, and encodes. Their errors carry their codes
// (wire.CodeOf): not_found for no such session or prompt,
// session_locked for a session another process has open, busy while
// work runs, invalid_params for a session that cannot be used.

// StoreError is an error of the session store's commands, with its code.
type StoreError struct {
	Code wire.ErrorCode
	Err  error
}

// Error returns the message of the StoreError.
func (e *StoreError) Error() string { return e.Err.Error() }

// Unwrap returns the error it carries.
func (e *StoreError) Unwrap() error { return e.Err }

// ErrorCode returns the StoreError's code.
func (e *StoreError) ErrorCode() wire.ErrorCode { return e.Code }

// storeError gives err its code.
func storeError(err error) error {
	var corrupt *sessionfile.CorruptError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrNoForkPoint):
		return &StoreError{Code: wire.CodeNotFound, Err: err}
	case errors.Is(err, sessionfile.ErrLocked):
		return &StoreError{Code: wire.CodeSessionLocked, Err: err}
	case errors.As(err, &corrupt):
		return &StoreError{Code: wire.CodeInvalidParams, Err: err}
	}
	return err
}

// ListStored lists the sessions of st, newest first; cwd, when not
// empty, keeps those of that directory (relative to the session's).
// The session's own is marked current.
func (s *Session) ListStored(ctx context.Context, st *store.Store, cwd string) ([]wire.SessionInfo, error) {
	var f store.Filter
	if cwd != "" {
		f.CWD = cwd
		if !filepath.IsAbs(cwd) {
			f.CWD = filepath.Join(s.cwd, cwd)
		}
	}
	list, err := st.List(ctx, f)
	if err != nil {
		return nil, err
	}
	cur := s.currentIn(st)
	out := make([]wire.SessionInfo, 0, len(list))
	for _, e := range list {
		out = append(out, SessionInfo(e, cur))
	}
	return out, nil
}

// LoadStored makes session id of st the session's (see LoadFile) and
// returns its entry as of then.
func (s *Session) LoadStored(ctx context.Context, st *store.Store, id string) (wire.SessionInfo, error) {
	if !st.Has(id) {
		return wire.SessionInfo{}, storeError(fmt.Errorf("session %q: %w", id, store.ErrNotFound))
	}
	if err := s.LoadFile(st.Path(id), id); err != nil {
		return wire.SessionInfo{}, storeError(err)
	}
	e, err := st.Get(ctx, id)
	if err != nil {
		return wire.SessionInfo{}, storeError(err)
	}
	return SessionInfo(e, id), nil
}

// ErrNoStoredSession is the error of ForkStored when it is asked to fork
// the session's own stored session and the session keeps none in the
// store.
var ErrNoStoredSession = wire.Sentinel(wire.CodeInvalidParams, "this session is not kept in the session store: name the session to fork")

// ForkStored forks session parent of st (the session's own when
// parent is empty) before the user prompt at names (see store.Fork), and
// with load makes the fork the session's (see LoadFile). With load it
// is refused as busy before anything is made while work runs; a load
// that fails after the fork was made keeps the fork.
func (s *Session) ForkStored(ctx context.Context, st *store.Store, parent string, at store.ForkPoint, load bool) (wire.ForkSessionResult, error) {
	if parent == "" {
		if parent = s.currentIn(st); parent == "" {
			return wire.ForkSessionResult{}, ErrNoStoredSession
		}
	}
	if load && s.Busy() {
		return wire.ForkSessionResult{}, ErrBusy
	}
	f, err := st.Fork(ctx, parent, at)
	if err != nil {
		return wire.ForkSessionResult{}, storeError(err)
	}
	res := wire.ForkSessionResult{
		Session:   SessionInfo(f.Entry, s.currentIn(st)),
		AtIndex:   int64(f.At),
		MessageID: f.MessageID,
		Message:   agent.WireMessage(&f.Message),
	}
	if load {
		info, err := s.LoadStored(ctx, st, f.ID)
		if err != nil {
			return wire.ForkSessionResult{}, err
		}
		res.Session, res.Loaded = info, true
	}
	return res, nil
}

// ForkPointOf is the prompt a fork command names: by position, by
// message id, or neither (the last prompt); both is invalid_params.
func ForkPointOf(atIndex *int64, atMessageID string) (store.ForkPoint, error) {
	switch {
	case atIndex != nil && atMessageID != "":
		return store.ForkPoint{}, wire.Sentinel(wire.CodeInvalidParams, "fork_session: at_index and at_message_id do not go together")
	case atIndex != nil:
		return store.AtIndex(int(*atIndex)), nil
	case atMessageID != "":
		return store.AtMessage(atMessageID), nil
	}
	return store.ForkPoint{}, nil
}

// currentIn is the id of the session's own file in st; "" when it keeps
// none there.
func (s *Session) currentIn(st *store.Store) string {
	if id := s.StoredID(); id != "" {
		return id
	}
	id, _ := st.IDOf(s.SessionFile())
	return id
}

// SessionInfo is e on the wire; current is the id of the session asking,
// marked current.
func SessionInfo(e store.Entry, current string) wire.SessionInfo {
	info := wire.SessionInfo{
		ID: e.ID, Title: e.Title, CWD: e.CWD,
		Created: wireTime(e.Created), Updated: wireTime(e.Updated),
		MessageCount: int64(e.Messages), Model: e.Model, ParentID: e.Parent,
		ForkMessageID: e.ForkMessage, Error: e.Error, Path: e.Path,
	}
	if e.ForkIndex != nil {
		i := int64(*e.ForkIndex)
		info.ForkIndex = &i
	}
	if current != "" && e.ID == current {
		yes := true
		info.Current = &yes
	}
	return info
}

// wireTime is t as the wire writes times: UTC, RFC 3339, with a Z.
func wireTime(t time.Time) wire.Time { return t.UTC().Format(time.RFC3339Nano) }
