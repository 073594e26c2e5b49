// Package checkpoint records what the turns of a session change in files,
// so that a turn can be undone.
//
// Before a turn first changes a file (the write and edit tools, and a
// bash command in a git work tree: see git.go), the file's content as it
// was (or its absence) is recorded; after each change, the hash of what
// zot left. Undoing turn N restores every file that turn N and the turns
// after it changed to what it held before turn N, after checking that no
// file changed outside zot since: a file whose content is not what zot
// left, or that changed between two of the undone turns, refuses the
// whole undo (ConflictError), naming the file, and nothing is restored.
//
// A turn is a user message of the transcript: turn N is the N-th message
// of role user, and undoing it also cuts the transcript back to before
// that message (Outcome.Cut). Records name their turn by the index of its
// message and a fingerprint of its text, so that a transcript changed
// since (a compaction, a clear) is never matched to the wrong turn.
//
// Records are bounded: a file larger than Limits.File, or one that would
// take the session's records past Limits.Session, is recorded without its
// content, and undoing its turn leaves it as it is and says so
// (ActionNotUndoable). A Store keeps its records in a folder (the
// session's, DirFor), or in memory for a session kept nowhere.
package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"zot.dev/zot/internal/atomicfile"
	"zot.dev/zot/internal/llm"
)

// Limits bound what a Store keeps.
type Limits struct {
	// File is the largest file whose content is kept; a larger one is
	// recorded without it (by its size and time of change). 0 means
	// DefaultFileLimit.
	File int64
	// Session bounds the contents a session keeps, all its turns
	// together (each distinct content counted once); past it files are
	// recorded by their hash only. 0 means
	// DefaultSessionLimit.
	Session int64
}

// The default limits.
const (
	DefaultFileLimit    = 1 << 20
	DefaultSessionLimit = 32 << 20
)

// withDefaults fills in the zero limits.
func (l Limits) withDefaults() Limits {
	if l.File <= 0 {
		l.File = DefaultFileLimit
	}
	if l.Session <= 0 {
		l.Session = DefaultSessionLimit
	}
	return l
}

// Turn names the turn a change belongs to: the index of its user message
// in the transcript and that message's Fingerprint.
type Turn struct {
	At int    `json:"at"`
	FP string `json:"fp"`
}

// Fingerprint identifies a user message by its text.
func Fingerprint(m llm.Message) string {
	h := sha256.New()
	for _, b := range m.Content {
		if t, ok := b.(*llm.TextBlock); ok {
			io.WriteString(h, t.Text)
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// State is what a path held at one moment.
type State struct {
	// Exists is false when there was no file.
	Exists bool `json:"exists"`
	// Hash is the SHA-256 of the content, in hex; for a file larger than
	// Limits.File, "stat:" with its size and modification time; for a
	// path that is not a regular file, "type:" and its mode.
	Hash string `json:"hash,omitempty"`
	// Size is the content's length.
	Size int64 `json:"size,omitempty"`
	// Mode is the file's permission bits.
	Mode fs.FileMode `json:"mode,omitempty"`
	// Kept says the content is kept, so the file can be restored to it.
	Kept bool `json:"kept,omitempty"`
	// Why says why an existing file's content was not kept.
	Why string `json:"why,omitempty"`
	// Dir is the folder holding the path with its symbolic links
	// resolved, when recorded: an undo through a folder that resolves
	// elsewhere since (a link planted in its place) is refused.
	Dir string `json:"dir,omitempty"`
}

// same reports whether a and b are the same content (or both absent).
func (a State) same(b State) bool {
	return a.Exists == b.Exists && (!a.Exists || a.Hash == b.Hash)
}

// record is one line of the log: the state of a path before its turn
// first changed it, or after a change of the turn.
type record struct {
	Turn
	Path   string `json:"path"`
	Before *State `json:"before,omitempty"`
	After  *State `json:"after,omitempty"`
}

// group is what one turn changed.
type group struct {
	turn  Turn
	paths []string // in the order first changed
	files map[string]*change
}

// change is one path in one turn.
type change struct {
	before State
	after  *State // nil until a change was settled
}

// Store holds a session's checkpoints. Its methods may be called from
// several goroutines.
type Store struct {
	dir string // "" keeps everything in memory
	lim Limits

	mu     sync.Mutex
	loaded bool
	groups []*group
	blobs  map[string][]byte // in memory only
	used   int64             // bytes of kept contents, each hash once
	kept   map[string]int64  // kept hashes and their sizes
	roots  map[string]string // the top of the git work tree of each folder asked about
}

// New returns the store of dir, where the records are kept (created on
// the first record); "" keeps them in memory, for as long as the Store
// lives. Nothing is read before the store is first used.
func New(dir string, lim Limits) *Store {
	return &Store{dir: dir, lim: lim.withDefaults()}
}

// DirFor is where the checkpoints of the session kept in file
// sessionFile live: the folder .checkpoints/<name without .jsonl> beside
// it (<zot home>/sessions/.checkpoints/<id> for a stored session).
func DirFor(sessionFile string) string {
	base := strings.TrimSuffix(filepath.Base(sessionFile), ".jsonl")
	return filepath.Join(filepath.Dir(sessionFile), ".checkpoints", base)
}

// Dir is the folder of the records; "" when they are kept in memory.
func (s *Store) Dir() string { return s.dir }

// logName is the log's file name in the store's folder.
const logName = "log.ndjson"

// load reads the log once. The caller holds s.mu.
func (s *Store) load() error {
	if s.loaded {
		return nil
	}
	s.kept = map[string]int64{}
	if s.dir == "" {
		s.blobs = map[string][]byte{}
		s.loaded = true
		return nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, logName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading checkpoints: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Path == "" {
			continue // a torn last line
		}
		s.apply(r)
	}
	for _, g := range s.groups {
		for _, c := range g.files {
			if c.before.Kept && c.before.Exists {
				s.kept[c.before.Hash] = c.before.Size
			}
		}
	}
	for _, n := range s.kept {
		s.used += n
	}
	s.loaded = true
	return nil
}

// apply adds r to the groups in memory.
func (s *Store) apply(r record) {
	var g *group
	if n := len(s.groups); n > 0 && s.groups[n-1].turn == r.Turn {
		g = s.groups[n-1]
	} else {
		g = &group{turn: r.Turn, files: map[string]*change{}}
		s.groups = append(s.groups, g)
	}
	c := g.files[r.Path]
	switch {
	case r.Before != nil && c == nil:
		g.files[r.Path] = &change{before: *r.Before}
		g.paths = append(g.paths, r.Path)
	case r.After != nil && c != nil:
		a := *r.After
		c.after = &a
	}
}

// Recorded reports whether path has a record of turn t.
func (s *Store) Recorded(t Turn, path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.load() != nil {
		return false
	}
	g := s.groupOf(t)
	return g != nil && g.files[path] != nil
}

// groupOf returns the group of turn t, if it is the last. The caller
// holds s.mu.
func (s *Store) groupOf(t Turn) *group {
	if n := len(s.groups); n > 0 && s.groups[n-1].turn == t {
		return s.groups[n-1]
	}
	return nil
}

// Before records what path holds now, as its state before turn t, unless
// t already changed it. Call it before a change to path.
func (s *Store) Before(t Turn, path string) error {
	if s.Recorded(t, path) {
		return nil
	}
	st, content, err := s.read(path)
	if err != nil {
		return err
	}
	return s.before(t, path, st, content)
}

// before records st (with content, when it is to be kept) as path's state
// before turn t.
func (s *Store) before(t Turn, path string, st State, content []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return err
	}
	if g := s.groupOf(t); g != nil && g.files[path] != nil {
		return nil
	}
	if st.Kept && st.Exists {
		if err := s.keep(&st, content); err != nil {
			return err
		}
	}
	r := record{Turn: t, Path: path, Before: &st}
	if err := s.append(r); err != nil {
		return err
	}
	s.apply(r)
	return nil
}

// keep stores content under st's hash, or turns st into a record by hash
// only when the session's limit would be passed. The caller holds s.mu.
func (s *Store) keep(st *State, content []byte) error {
	if _, ok := s.kept[st.Hash]; ok {
		return nil
	}
	if s.used+st.Size > s.lim.Session {
		st.Kept, st.Why = false, fmt.Sprintf("the session's checkpoints reached their limit of %s", size(s.lim.Session))
		return nil
	}
	if s.dir == "" {
		s.blobs[st.Hash] = content
	} else if err := writeNew(filepath.Join(s.dir, "blobs", st.Hash), content); err != nil {
		return fmt.Errorf("recording a checkpoint: %w", err)
	}
	s.kept[st.Hash] = st.Size
	s.used += st.Size
	return nil
}

// After records what path holds now as what turn t left (after a change
// of t that Before recorded).
func (s *Store) After(t Turn, path string) error {
	st, _, err := s.stat(path, false)
	if err != nil {
		return err
	}
	return s.after(t, path, st)
}

// after records st as what turn t left in path.
func (s *Store) after(t Turn, path string, st State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return err
	}
	g := s.groupOf(t)
	if g == nil || g.files[path] == nil {
		return nil
	}
	if c := g.files[path]; c.after != nil && c.after.same(st) {
		return nil
	}
	st.Kept, st.Why = false, ""
	r := record{Turn: t, Path: path, After: &st}
	if err := s.append(r); err != nil {
		return err
	}
	s.apply(r)
	return nil
}

// append writes r to the log. The caller holds s.mu.
func (s *Store) append(r record) error {
	if s.dir == "" {
		return nil
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("recording a checkpoint: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, logName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("recording a checkpoint: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording a checkpoint: %w", err)
	}
	return nil
}

// read returns path's state and, when it is to be kept, its content.
func (s *Store) read(path string) (State, []byte, error) {
	return s.stat(path, true)
}

// stat returns path's state; with keep, also its content when it is a
// regular file within the file limit (State.Kept).
func (s *Store) stat(path string, keep bool) (State, []byte, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{Exists: false, Kept: true, Dir: realDir(path)}, nil, nil
	}
	if err != nil {
		return State{}, nil, fmt.Errorf("recording a checkpoint of %s: %w", path, err)
	}
	st := State{Exists: true, Size: fi.Size(), Mode: fi.Mode().Perm(), Dir: realDir(path)}
	if !fi.Mode().IsRegular() {
		st.Hash, st.Size, st.Why = "type:"+fi.Mode().Type().String(), 0, "not a regular file"
		return st, nil, nil
	}
	if fi.Size() > s.lim.File {
		// Too large to keep: known by its size and time of change
		// instead of a hash, so that it is never read whole.
		st.Hash = fmt.Sprintf("stat:%d:%d", fi.Size(), fi.ModTime().UnixNano())
		if keep {
			st.Why = fmt.Sprintf("larger than the %s a checkpoint keeps of one file", size(s.lim.File))
		}
		return st, nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return State{}, nil, fmt.Errorf("recording a checkpoint of %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	st.Hash, st.Size, st.Kept = hex.EncodeToString(sum[:]), int64(len(data)), keep
	if !keep {
		data = nil
	}
	return st, data, nil
}

// content returns the kept content of hash. The caller holds s.mu.
func (s *Store) content(hash string) ([]byte, error) {
	if s.dir == "" {
		data, ok := s.blobs[hash]
		if !ok {
			return nil, fmt.Errorf("checkpoint content %s is missing", hash)
		}
		return data, nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, "blobs", hash))
	if err != nil {
		return nil, fmt.Errorf("reading a checkpoint: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("checkpoint content %s is damaged", hash)
	}
	return data, nil
}

// Reset forgets every record: the transcript they belong to is gone (a
// clear).
func (s *Store) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups, s.blobs, s.kept, s.used, s.loaded = nil, nil, nil, 0, false
	if s.dir == "" {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("removing checkpoints: %w", err)
	}
	return nil
}

// writeNew writes a content file whole, unless it is there already.
func writeNew(path string, data []byte) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	return atomicfile.Write(path, data)
}

// size says n bytes in words.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// realDir is the folder holding path with the symbolic links of its
// longest part that exists resolved (the rest, not made yet, as written).
func realDir(path string) string {
	rest := ""
	for cur := filepath.Dir(path); ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Dir(path)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
