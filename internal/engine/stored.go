package engine

import (
	"context"
	"errors"
	"fmt"

	"zot.dev/zot/internal/store"
)

// storedSession resolves SessionStore and SessionID into cfg.SessionFile
// and returns the session's id; "" without a store.
func storedSession(cfg *SessionConfig) (string, error) {
	switch {
	case cfg.SessionStore == "" && cfg.SessionID != "":
		return "", errors.New("SessionID names a stored session: it needs SessionStore")
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
func (s *Session) StoredID() string { return s.storedID }
