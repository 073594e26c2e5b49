//go:build unix && !solaris && !aix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockPoll is how often lock tries again for a lock another process holds.
const lockPoll = 5 * time.Millisecond

// lock takes the exclusive flock of the index's lock file, waiting while
// another process holds it, until ctx ends. The kernel releases it when
// the process ends, however it ends.
func (s *Store) lock(ctx context.Context) (unlock func(), err error) {
	unlock, err = LockFile(ctx, filepath.Join(s.dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("locking the index: %w", err)
	}
	return unlock, nil
}

// LockFile takes the exclusive flock of the file at path (made if
// missing), waiting while another process holds it, until ctx ends; the
// function it returns releases it. The kernel releases it when the
// process ends, however it ends. Other files of the zot home that
// several processes change (read, change, write back) use it.
func LockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-time.After(lockPoll):
		}
	}
}

// tryLockFile takes the exclusive flock of the file at path without
// waiting; held reports that another process has it.
func tryLockFile(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return f, false, nil
}
