//go:build unix && !solaris && !aix

package sessionfile

import (
	"errors"
	"os"
	"syscall"
)

// errHeld says that another open file holds the lock.
var errHeld = errors.New("lock held")

// lockFile opens (creating it) the lock file at path and takes an
// exclusive flock on it without waiting. The lock is the open file's:
// closing it, or the process ending, releases it.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errHeld
		}
		return nil, err
	}
	return f, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
