package tools

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// spillMax caps the bytes one bash call saves to its spill file; the
// output after them is dropped (its last lines still show in the result).
const spillMax = 64 << 20

// Spills keeps the files in which bash saves the full output of calls
// whose output it truncated. The files go in a directory of its own, made
// in its parent at the first spill, and stay until Close removes the
// directory: a result names its file so that the model can read it later,
// so the file must outlive the call. The engine makes one per session and
// closes it with the session. A Spills is safe for concurrent use.
type Spills struct {
	parent string

	mu     sync.Mutex
	dir    string // "" until the first spill
	closed bool
}

// NewSpills returns a Spills whose directory will be made in parent;
// empty means os.TempDir(). It creates nothing yet.
func NewSpills(parent string) *Spills { return &Spills{parent: parent} }

// errSpillsClosed is the error of a spill after Close.
var errSpillsClosed = errors.New("the spill directory was removed when the session closed")

// create makes a new spill file.
func (s *Spills) create() (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errSpillsClosed
	}
	if s.dir == "" {
		parent := s.parent
		if parent == "" {
			parent = os.TempDir()
		}
		dir, err := os.MkdirTemp(parent, "zot-spill-")
		if err != nil {
			return nil, err
		}
		s.dir = dir
	}
	return os.CreateTemp(s.dir, "zot-bash-*.log")
}

// Close removes the directory and every spill file in it; later spills
// fail. It is safe to call more than once, and on a nil *Spills.
func (s *Spills) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.dir == "" {
		return nil
	}
	dir := s.dir
	s.dir = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing bash spill files: %w", err)
	}
	return nil
}

// spillFunc makes a new spill file.
type spillFunc func() (*os.File, error)

// spillIn returns a spillFunc that makes spill files in dir, which nothing
// removes.
func spillIn(dir string) spillFunc {
	return func() (*os.File, error) { return os.CreateTemp(dir, "zot-bash-*.log") }
}
