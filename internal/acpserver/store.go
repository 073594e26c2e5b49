package acpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	zsession "zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
)

// open makes the engine session of id, with its file, and registers it,
// pinned for the caller (see session.pins). With fresh the file must not
// exist yet, and is made as owner's; else owner is the one its file
// names. A principal of the network listener (owner not empty) at its
// MaxSessions is refused with limit_exceeded.
func (a *Agent) open(id, cwd, owner string, fresh bool) (*acpSession, error) {
	if fresh && a.stored(id) {
		return nil, fmt.Errorf("session %s exists already", id)
	}
	if err := a.underCap(owner, id); err != nil {
		return nil, err
	}
	cfg := a.opts.Defaults
	cfg.CWD = cwd
	cfg.SessionFile, cfg.SessionID, cfg.Owner = a.path(id), id, owner
	cfg.Log = a.opts.Log
	var sp *acpSession
	cfg.Approve = a.approver(&sp)                                          // asked for what the session's mode leaves to the client
	cfg.Mode, cfg.LockMode, _ = engine.ModeOfPermission(a.opts.Permission) // checked by New
	// Extension and MCP tools may change anything: the mode decides for
	// them too, unless they say they change nothing.
	cfg.ApproveOtherTools = true
	eng, err := a.opts.Host.NewSession(cfg)
	if err != nil {
		field := ""
		if errors.Is(err, engine.ErrWorkDir) {
			field = "cwd"
		}
		return nil, a.errorOf(err, id, field)
	}
	s := a.newSession(id, eng.CWD(), eng)
	s.owner = owner
	sp = s
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		_ = s.close()
		return nil, jsonrpc.NewError(jsonrpc.CodeCancelled, jsonrpc.KindCancelled, "the daemon is shutting down")
	}
	if prev := a.sessions[id]; prev != nil {
		// Opened by another connection at the same moment: keep theirs.
		a.mu.Unlock()
		_ = s.close()
		return prev, nil
	}
	s.pins = 1
	a.sessions[id] = s
	a.mu.Unlock()
	s.addPlanTool()     // plan.go
	s.watchExtensions() // commands.go
	return s, nil
}

// reopen returns session id, open already or opened from its file,
// pinned: the caller attaches its connection or calls releaseUnused.
func (a *Agent) reopen(id, cwd string) (*acpSession, error) {
	defer a.gates.claim(id)()
	if s := a.pinned(id); s != nil {
		return s, nil
	}
	owner, ok := a.ownerOf(id)
	if !ok {
		return nil, appError(acp.ErrorKindUnknownSession, id, "no session %q", id)
	}
	return a.open(id, cwd, owner, false)
}

// releaseUnused drops the pin of a request that found or opened s and
// then failed; s is closed when nothing else holds it (no connection, no
// other request, no turn: a turn whose client left runs on).
func (a *Agent) releaseUnused(s *acpSession) {
	s.unpin()
	a.closeIfIdle(s)
}

// delete removes session id: it is closed when open (refused as busy
// while a turn runs), and its file and lock file are removed (refused as
// session_locked when another process holds it).
func (a *Agent) delete(id string) error {
	defer a.gates.claim(id)()
	if s := a.lookup(id); s != nil {
		if s.eng.Busy() {
			return appError(acp.ErrorKindBusy, id, "session %s runs a prompt; delete it after the answer", id)
		}
		a.mu.Lock()
		if a.sessions[id] == s {
			delete(a.sessions, id)
		}
		a.mu.Unlock()
		s.mu.Lock()
		clients := append([]*conn(nil), s.clients...)
		s.mu.Unlock()
		for _, c := range clients {
			c.mu.Lock()
			delete(c.open, id)
			c.mu.Unlock()
		}
		if err := s.close(); err != nil {
			a.logf("closing session %s: %v", id, err)
		}
	} else if !a.stored(id) {
		return appError(acp.ErrorKindUnknownSession, id, "no session %q", id)
	}
	return a.removeFile(id)
}

// listPage is how many sessions one session/list answer holds.
const listPage = 100

// list serves session/list: the stored sessions (the store's, every
// door's), newest first, a page at a time, those of one working directory
// when cwd is set. The cursor is the position of the next page in that
// order.
func (a *Agent) list(ctx context.Context, cwd, cursor string, may func(owner string) bool) (acp.ListSessionsResponse, error) {
	start := 0
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), "o:"))
		if err != nil || err2 != nil || n < 0 || !strings.HasPrefix(string(raw), "o:") {
			return acp.ListSessionsResponse{}, jsonrpc.InvalidParams("cursor", "is not a cursor this agent gave")
		}
		start = n
	}
	all, err := a.store.List(ctx, store.Filter{CWD: cwd})
	if err != nil {
		return acp.ListSessionsResponse{}, jsonrpc.Internal(err)
	}
	mine := all[:0]
	for _, e := range all {
		if may(e.Owner) {
			mine = append(mine, e)
		}
	}
	all = mine
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	if start > len(all) {
		start = len(all)
	}
	end := min(start+listPage, len(all))
	for _, s := range all[start:end] {
		info := acp.SessionInfo{SessionID: acp.SessionId(s.ID), CWD: s.CWD}
		updated := s.Updated.UTC().Format(time.RFC3339)
		info.UpdatedAt = &updated
		if s.Title != "" {
			title := s.Title
			info.Title = &title
		}
		// zot's own facts, where ACP has no member for them: the size of
		// the transcript, and for a fork where it came from (a client
		// draws the tree from parentId).
		meta := map[string]any{"messageCount": s.Messages}
		if s.Parent != "" {
			meta["parentId"] = s.Parent
			if s.ForkIndex != nil {
				meta["forkIndex"] = *s.ForkIndex
			}
		}
		info.Meta = map[string]any{"zot": meta}
		out.Sessions = append(out.Sessions, info)
	}
	if end < len(all) {
		next := base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(end)))
		out.NextCursor = &next
	}
	return out, nil
}

// status is the answer of _zot/status and status: the open sessions
// whose owner may says the asker may see.
func (a *Agent) status(may func(owner string) bool) acp.StatusResponse {
	a.mu.Lock()
	list := make([]*acpSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		if may(s.owner) {
			list = append(list, s)
		}
	}
	a.mu.Unlock()
	out := acp.StatusResponse{
		Version:         a.opts.Version,
		ProtocolVersion: acp.ProtocolVersionLatest,
		Sessions:        make([]acp.SessionStatus, 0, len(list)),
		UptimeMs:        time.Since(a.started).Milliseconds(),
	}
	g := int64(runtime.NumGoroutine())
	out.Goroutines = &g
	for _, s := range list {
		out.Sessions = append(out.Sessions, s.status())
	}
	sort.Slice(out.Sessions, func(i, j int) bool { return out.Sessions[i].SessionID < out.Sessions[j].SessionID })
	return out
}

// corruptError is the answer for a session whose file is damaged
// (session.ErrCorrupt): data to mend, named by file and line, not a fault
// of zot's.
func corruptError(id string, err error) *jsonrpc.Error {
	e := appError(acp.ErrorKindSessionCorrupt, id, "the session's file is damaged: %v", err)
	var ce *zsession.CorruptError
	if errors.As(err, &ce) {
		e = e.With("file", ce.Path)
		if ce.Line > 0 {
			e = e.With("line", ce.Line)
		}
	}
	return e
}
