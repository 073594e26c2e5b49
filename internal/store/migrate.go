package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Earlier versions kept print mode's sessions (zot -p --continue) in a
// folder per working directory, sessions/<slug>-<key>/<time>.jsonl, where
// <key> is the first 6 bytes of the SHA-256 of the directory in hex; the
// daemon kept sessions/<id>.jsonl, the layout of today. migrate moves each
// file of the first kind to sessions/<time>-<key>.jsonl: the id keeps the
// key, so a file too old to record its directory still belongs to it (see
// Entry.inDir). A file is moved under its own session lock, never while
// another process has it open, and without replacing anything: it is
// linked under its new name before its old name goes, so a process killed
// in between leaves it under both, and the next run only removes the old
// name. The emptied folder goes too.

// keyLen is the length of a folder key in hex.
const keyLen = 12

// migrate moves the files of the older layout into the folder.
func (s *Store) migrate(ctx context.Context) error {
	dirs, err := legacyDirs(s.dir)
	if err != nil || len(dirs) == 0 {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return fmt.Errorf("moving sessions to %s: %w", s.dir, err)
	}
	defer unlock()
	for _, d := range dirs {
		s.migrateDir(d)
	}
	return nil
}

// legacyDirs lists the folders of the older layout in dir.
func legacyDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// migrateDir moves the session files of folder d.
func (s *Store) migrateDir(d string) {
	key := keyOfDir(filepath.Base(d))
	entries, err := os.ReadDir(d)
	if err != nil {
		fmt.Fprintf(s.log, "zot: moving sessions of %s: %v\n", d, err)
		return
	}
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || strings.HasPrefix(stem, ".") || !e.Type().IsRegular() {
			continue
		}
		if err := s.moveOne(filepath.Join(d, e.Name()), stem, key); err != nil {
			fmt.Fprintf(s.log, "zot: moving session %s: %v\n", filepath.Join(d, e.Name()), err)
		}
	}
	// Only an emptied folder goes (a lock file left beside a file
	// still held keeps it).
	_ = os.Remove(d)
}

// moveOne moves the session file old, named stem.jsonl in a folder of
// key, into the folder.
func (s *Store) moveOne(old, stem, key string) error {
	lock, held, err := tryLockFile(old + ".lock")
	if err != nil {
		return err
	}
	if held {
		return errors.New("another zot has it open; it moves on a later run")
	}
	defer func() {
		_ = os.Remove(old + ".lock") // while held: no one takes the lock of a file that went
		lock.Close()
	}()
	base := stem
	if !ValidID(base) || len(base) > 100 {
		base = "s"
	}
	base += "-" + key
	for n := 1; ; n++ {
		id := base
		if n > 1 {
			id += "-" + strconv.Itoa(n)
		}
		err := os.Link(old, s.Path(id))
		if err == nil {
			return os.Remove(old)
		}
		if errors.Is(err, fs.ErrExist) {
			if same(old, s.Path(id)) { // moved before, by a run killed before the old name went
				return os.Remove(old)
			}
			continue
		}
		// No hard links here: a rename, after checking the name is free
		// (the index lock keeps other zots from taking it meanwhile).
		if _, err := os.Lstat(s.Path(id)); err == nil {
			continue
		}
		return os.Rename(old, s.Path(id))
	}
}

// same reports whether paths a and b are one file.
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// keyOfDir is the key a folder of the older layout ends with; for a
// folder not named so, a key made from its name.
func keyOfDir(name string) string {
	if i := strings.LastIndexByte(name, '-'); i >= 0 && isKey(name[i+1:]) {
		return name[i+1:]
	}
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:keyLen/2])
}

// dirHash is the key of working directory cwd (clean) in the older
// layout.
func dirHash(cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	return hex.EncodeToString(sum[:keyLen/2])
}

// legacyKeyOf is the folder key of an id migrate made
// (<time>-<key>[-n]), or "".
func legacyKeyOf(id string) string {
	parts := strings.Split(id, "-")
	if len(parts) < 2 || len(parts) > 3 || !isKey(parts[1]) {
		return ""
	}
	return parts[1]
}

// isKey reports whether s is a folder key: keyLen lowercase hex digits.
func isKey(s string) bool {
	if len(s) != keyLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
