//go:build unix && !solaris && !aix

package settings

import (
	"errors"
	"os"
	"syscall"
)

// tryLock opens (creating it) the lock file at path and takes an
// exclusive flock on it without waiting: held reports that another open
// file has it. The lock is the open file's: closing it, or the process
// ending, releases it. A symbolic link at path is not followed.
func tryLock(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
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
