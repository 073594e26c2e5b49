package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"zot.dev/zot/internal/agent"
	"zot.dev/zot/internal/checkpoint"
	"zot.dev/zot/internal/sessionfile"
	"zot.dev/zot/internal/store"
)

// storedSession resolves SessionStore and SessionID into cfg.SessionFile
// and returns the session's id; "" without a store.
func storedSession(cfg *SessionConfig) (string, error) {
	switch {
	case cfg.SessionStore == "" && cfg.SessionID != "" && cfg.SessionFile != "":
		// The file of a stored session, opened by its path: the store is
		// the file's folder.
		if !store.ValidID(cfg.SessionID) || filepath.Base(cfg.SessionFile) != cfg.SessionID+".jsonl" {
			return "", fmt.Errorf("SessionID %q does not name SessionFile %s: a stored session's file is <store>/<id>.jsonl", cfg.SessionID, cfg.SessionFile)
		}
		return cfg.SessionID, nil
	case cfg.SessionStore == "" && cfg.SessionID != "":
		return "", errors.New("SessionID names a stored session: it needs SessionStore, or SessionFile naming its file")
	case cfg.SessionStore == "":
		return "", nil
	case cfg.SessionFile != "":
		return "", errors.New("SessionStore and SessionFile contradict each other: give one")
	}
	id := cfg.SessionID
	if id == "" {
		id = store.NewID()
	} else if !store.ValidID(id) {
		return "", fmt.Errorf("SessionID %q is not a session id (letters, digits, '_' and '-', at most 128)", id)
	}
	st, err := store.Open(context.Background(), cfg.SessionStore, cfg.Log)
	if err != nil {
		return "", err
	}
	cfg.SessionFile = st.Path(id)
	return id, nil
}

// StoredID is the session's id in SessionConfig.SessionStore; "" for a
// session kept elsewhere or in memory only.
func (s *Session) StoredID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storedID
}

// SessionFile is the file the session keeps its transcript in; "" for a
// session kept in memory only.
func (s *Session) SessionFile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		return ""
	}
	return s.store.Path()
}

// LoadFile makes the session keep its transcript in the session file at
// path from now on: the file is opened and locked (an error matching
// sessionfile.ErrLocked when another process has it), its transcript
// replaces the session's, and the file used until then, if any, is
// closed and kept. storedID is the file's id in a session store (see
// StoredID), "" for a file elsewhere. The model, mode, working directory,
// extensions, MCP servers and cumulative usage stay. It returns ErrBusy
// while work runs or waits, and ErrClosed once the session is closed; on
// any failure the session is as it was.
func (s *Session) LoadFile(path, storedID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if err := s.idleLocked(); err != nil {
			return err
		}
		if !s.working {
			break
		}
		// The last work's done is delivered and its worker is on its way
		// out: it still reads s.store once (a sync), so wait for it.
		idle := s.idle
		s.mu.Unlock()
		<-idle
		s.mu.Lock()
	}
	if s.store != nil && s.store.Path() == path {
		s.storedID = storedID
		return nil
	}
	f, msgs, err := sessionfile.Open(path, sessionfile.Options{CWD: s.cwd})
	if err != nil {
		return err
	}
	if err := s.agent.SetTranscript(msgs); err != nil {
		var te *agent.TranscriptError
		if errors.As(err, &te) {
			err = &sessionfile.CorruptError{Path: path, Line: f.Line(te.Index), Err: te.Err}
		}
		f.Close()
		return err
	}
	old := s.store
	s.store, s.storedID = f, storedID
	s.undo.store = checkpoint.New(checkpoint.DirFor(path), checkpoint.Limits{}) // undo.go
	if old != nil {
		if err := old.Close(); err != nil {
			fmt.Fprintf(s.log, "zot: closing the session file left: %v\n", err)
		}
	}
	return nil
}
