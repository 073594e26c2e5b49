//go:build !unix || solaris || aix

package store

import (
	"context"
	"os"
)

// lock is a no-op where zot has no flock: the index is still replaced
// whole, so a reader never sees a part; two processes refreshing it at
// once may each write theirs, and the next refresh mends what the later
// one missed.
func (s *Store) lock(ctx context.Context) (unlock func(), err error) {
	return func() {}, nil
}

// LockFile is a no-op where zot has no flock: files are still replaced
// whole, so a reader never sees a part.
func LockFile(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, nil
}

// tryLockFile opens path; without flock nothing says another process
// has it.
func tryLockFile(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	return f, false, err
}
