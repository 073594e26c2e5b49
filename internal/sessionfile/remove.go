package sessionfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Remove deletes the session file at path and its lock file, holding the
// lock meanwhile, so that a session another process has open is never
// removed under it: that fails with an error wrapping ErrLocked and
// removes nothing. A path with no file is not an error. A lock file that
// cannot be removed is left behind; the next Open uses it as it is.
func Remove(path string) error {
	lock, err := lockFile(path + ".lock")
	if errors.Is(err, errHeld) {
		return fmt.Errorf("session file %s: %w", path, ErrLocked)
	}
	if err != nil {
		return fmt.Errorf("locking session file %s: %w", path, err)
	}
	err = os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	// The lock file goes while it is held, so that no other process
	// takes the lock of a file that is being deleted; a system that
	// cannot remove an open file has it removed once closed.
	if os.Remove(path+".lock") != nil {
		lock.Close()
		_ = os.Remove(path + ".lock")
	} else {
		lock.Close()
	}
	if err != nil {
		return fmt.Errorf("removing session file: %w", err)
	}
	return nil
}
