//go:build !windows && !(unix && !solaris && !aix)

package sessionfile

import (
	"errors"
	"os"
)

// errHeld says that another open file holds the lock.
var errHeld = errors.New("lock held")

// lockFile only creates the lock file: this system has no flock, so two
// processes are not kept off one session file here.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
}

// syncDir makes a rename in dir durable, where the system can.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	d.Sync() // not every system syncs directories
	return nil
}
