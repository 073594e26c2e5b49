//go:build !(unix && !solaris && !aix)

package settings

import "os"

// tryLock only creates the lock file: this system has no flock, so two
// processes changing a settings file at once may lose one's change here.
func tryLock(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	return f, false, err
}
