// Package atomicfile replaces a small file whole: a reader sees the old
// contents or the new, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, mode 0600. It creates path's
// directory (mode 0700) if missing, writes data to a temporary file in
// that directory, syncs it so that the rename never shows a file not yet
// written, and renames it over path. On failure path is untouched and the
// temporary file is removed. Its errors are the *os.PathError or
// *os.LinkError of the step that failed, which name the file.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
