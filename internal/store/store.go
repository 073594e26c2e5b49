// Package store says where sessions live under the zot home and keeps
// their index.
//
// Every door keeps its sessions in one folder, <zot home>/sessions, one
// file per session named <id>.jsonl (the format of internal/sessionfile).
// The index, sessions/index.json, lists them (id, title, working
// directory, created, updated, message count, model, parent) and is
// derived data: each file's entry is trusted only while the file's size
// and modification time are those the entry was made from, so a file
// written since (by any process) is read again, a file gone is dropped,
// and an index that is missing or does not decode is rebuilt from the
// files, never trusted and never fatal. The index is replaced whole
// (internal/atomicfile) while holding an flock on sessions/.index.lock,
// so that several processes (two daemons, a print-mode run, a listing)
// may refresh it at once, and a process killed at any moment leaves
// either the old index or the new one.
//
// Earlier versions kept print mode's sessions in
// sessions/<folder key>/<time>.jsonl. Open moves such files into the
// one layout (see migrate.go), losing nothing.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNotFound is the error Get reports, wrapped with the id, for a
// session the store does not hold.
var ErrNotFound = errors.New("no such session")

// Store is the sessions folder of one zot home. Its methods may be called
// from several goroutines and several processes at once.
type Store struct {
	dir string
	log io.Writer
}

// Entry is what the index says about one session.
type Entry struct {
	// ID names the session: its file is <ID>.jsonl.
	ID string `json:"id"`
	// Title is the start of the first thing the user asked, on one line.
	Title string `json:"title"`
	// CWD is the working directory the session was created in; empty for
	// a file that does not record it.
	CWD string `json:"cwd"`
	// Created is when the session was created.
	Created time.Time `json:"created"`
	// Updated is when its file last changed.
	Updated time.Time `json:"updated"`
	// Messages is how many messages its transcript holds.
	Messages int `json:"message_count"`
	// Model is the model that last answered, where the file records it.
	Model string `json:"model,omitempty"`
	// Parent is the id of the session this one was forked from; empty
	// for a session that was not forked.
	Parent string `json:"parent_id,omitempty"`
	// ForkIndex is, for a fork, the position (from 0) in the parent's
	// transcript of the user prompt it was forked at (the fork holds the
	// messages before it); ForkMessage is that prompt's MessageID.
	ForkIndex   *int   `json:"fork_index,omitempty"`
	ForkMessage string `json:"fork_message_id,omitempty"`
	// ParentCall is, for a sub-agent's session, the id of the task call
	// of Parent that started it; empty for a fork or a session of its own.
	ParentCall string `json:"parent_call_id,omitempty"`
	// Owner is the principal the session belongs to (a token's name on
	// the daemon's network listener); empty for the user whose zot home
	// holds it.
	Owner string `json:"owner,omitempty"`
	// Error says why the file could not be read (a damaged line, say);
	// the entry then holds what its header told.
	Error string `json:"error,omitempty"`
	// Path is the session's file.
	Path string `json:"path"`

	// size and mtime are the file's when the entry was made from it.
	size  int64
	mtime int64
}

// Open returns the store of the sessions folder dir (<zot home>/sessions),
// creating it (mode 0700) if needed, and moves the sessions of older
// layouts into it (a file another process holds open stays where it is
// until a later Open). log receives one line per problem that does not
// stop the store (a file that could not be moved); nil discards them.
func Open(ctx context.Context, dir string, log io.Writer) (*Store, error) {
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	s := &Store{dir: dir, log: log}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir is the sessions folder.
func (s *Store) Dir() string { return s.dir }

// Path is the file of session id (which need not exist). id must be
// ValidID.
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+".jsonl") }

// Has reports whether session id has a file.
func (s *Store) Has(id string) bool {
	if !ValidID(id) {
		return false
	}
	st, err := os.Stat(s.Path(id))
	return err == nil && st.Mode().IsRegular()
}

// ValidID reports whether id has the form of a session id: a letter or
// digit, then up to 127 letters, digits, '_' or '-'. An id of another
// form names no session, and never a path outside the folder.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// NewID returns a fresh session id: the time now, so that ids sort by
// age, and 64 random bits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Filter narrows List.
type Filter struct {
	// CWD keeps the sessions of this working directory only.
	CWD string
}

// List returns the sessions, newest (last updated) first, bringing the
// index up to date with the files first.
func (s *Store) List(ctx context.Context, f Filter) ([]Entry, error) {
	all, err := s.refresh(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	cwd := ""
	if f.CWD != "" {
		cwd = filepath.Clean(f.CWD)
	}
	for _, e := range all {
		if cwd != "" && !e.inDir(cwd) {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// Get returns the entry of session id; an error wrapping ErrNotFound when
// the store has no such session.
func (s *Store) Get(ctx context.Context, id string) (Entry, error) {
	if !s.Has(id) {
		return Entry{}, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	all, err := s.refresh(ctx)
	if err != nil {
		return Entry{}, err
	}
	for _, e := range all {
		if e.ID == id {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("session %q: %w", id, ErrNotFound)
}

// Newest returns the file of the newest session of working directory
// cwd, or the file of a new session there (with a fresh id) when it has
// none.
func (s *Store) Newest(ctx context.Context, cwd string) (string, error) {
	list, err := s.List(ctx, Filter{CWD: cwd})
	if err != nil {
		return "", err
	}
	if len(list) > 0 {
		return list[0].Path, nil
	}
	return s.Path(NewID()), nil
}

// inDir reports whether e belongs to working directory cwd (clean): by
// the directory its file records, or, for a moved file of an older
// version that records none, by the folder key its id kept.
func (e Entry) inDir(cwd string) bool {
	if e.CWD != "" {
		return filepath.Clean(e.CWD) == cwd
	}
	return legacyKeyOf(e.ID) != "" && legacyKeyOf(e.ID) == dirHash(cwd)
}

// IDOf is the id of the session file at path when it is one of the
// store's (<dir>/<id>.jsonl); ok is false for a file elsewhere.
func (s *Store) IDOf(path string) (id string, ok bool) {
	if path == "" {
		return "", false
	}
	abs, err := filepath.Abs(path)
	dir, derr := filepath.Abs(s.dir)
	if err != nil || derr != nil || filepath.Dir(abs) != dir {
		return "", false
	}
	id, ok = strings.CutSuffix(filepath.Base(abs), ".jsonl")
	if !ok || !ValidID(id) {
		return "", false
	}
	return id, true
}
