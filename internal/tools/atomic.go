package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data: it writes a temporary file in
// the same directory, syncs it, gives it mode and renames it over path, so
// readers see either the old or the new content. When path is a symlink the
// file it points to is replaced.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".zot-*.tmp")
	if err != nil {
		return fmt.Errorf("creating temporary file in %s: %w", dir, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("setting mode of %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", name, path, err)
	}
	ok = true
	syncDir(dir)
	return nil
}

// syncDir flushes a directory entry change to disk where the platform
// allows it; failures are ignored because the rename already happened.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// existingMode returns the permission bits (setuid, setgid and sticky
// included) of the file at path and whether it exists; a missing file gets
// fallback. A directory is an error.
func existingMode(path string, fallback fs.FileMode) (mode fs.FileMode, exists bool, err error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fallback, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if st.IsDir() {
		return 0, true, fmt.Errorf("%w: is a directory", fs.ErrInvalid)
	}
	return st.Mode().Perm() | st.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), true, nil
}
