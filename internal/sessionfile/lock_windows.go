package sessionfile

import (
	"errors"
	"os"
	"syscall"
)

// errHeld says that another open file holds the lock.
var errHeld = errors.New("lock held")

// errorSharingViolation is ERROR_SHARING_VIOLATION.
const errorSharingViolation syscall.Errno = 32

// lockFile opens (creating it) the lock file at path with no sharing, so
// that a second open fails until the first handle is closed, or the
// process ends.
func lockFile(path string) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil, syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if errors.Is(err, errorSharingViolation) {
			return nil, errHeld
		}
		return nil, err
	}
	return os.NewFile(uintptr(h), path), nil
}

// syncDir does nothing: Windows has no way to sync a directory, and its
// renames are journaled.
func syncDir(string) error { return nil }
