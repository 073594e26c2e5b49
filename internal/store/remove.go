package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"zot.dev/zot/internal/sessionfile"
)

// Remove deletes stored session id: its file and lock file, then its
// entry, by bringing the index up to date (replaced whole under its
// lock, so no process ever reads an index half written). A session
// another process has open (a daemon serving it, a `zot --session` run)
// is never removed under it: that fails with an error matching
// sessionfile.ErrLocked and removes nothing. Forks of the session keep
// its id as their parent: they are listed as roots whose parent is gone.
// Remove fails with an error matching ErrNotFound for a session the store
// does not hold.
func (s *Store) Remove(ctx context.Context, id string) error {
	if !s.Has(id) {
		return fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	if err := sessionfile.Remove(s.Path(id)); err != nil {
		return fmt.Errorf("removing session %s: %w", id, err)
	}
	// Its checkpoints (internal/checkpoint.DirFor of its file) go with it.
	if err := os.RemoveAll(filepath.Join(s.dir, ".checkpoints", id)); err != nil {
		fmt.Fprintf(s.log, "zot: removing the checkpoints of session %s: %v\n", id, err)
	}
	if _, err := s.refresh(ctx); err != nil {
		return fmt.Errorf("removing session %s: %w", id, err)
	}
	return nil
}
