package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// How write and edit put new content in a file.
//
// A file is normally replaced: the content goes to a temporary file in the
// same directory, which gets the old file's owner and mode, is synced and
// is renamed over the old one, so a reader sees the old content or the new
// one and a crash leaves one of them. A rename makes a new file, though,
// and two things of the old one it cannot keep. Where it would lose them
// the file is rewritten in place (truncated and written) instead, and a
// reader or a crash may then see it half written:
//   - its other hard links, which would go on naming the old content;
//   - its owner, when zot may write the file but cannot give the new one to
//     its owner (a group-writable file of another user, say).
//
// The checks come before either: a file the user may not write is refused
// even when its directory would allow the rename (a rename needs only the
// directory's permission), and so is anything but a regular file, reached
// directly or through symbolic links; replacing a named pipe, a socket or a
// device would delete it. A symbolic link is followed to the file it names,
// and the link stays; a link whose target does not exist is refused, since
// writing through it would create a file somewhere the model did not name.

// writeOutcome says how writeFile put the content in place.
type writeOutcome struct {
	created bool   // there was no file
	inPlace string // why the file was rewritten in place rather than replaced; "" when it was replaced
}

// writeFile puts data in the file at path, following symbolic links, as
// described above. A new file gets mode 0644 and missing parent
// directories are created. Its errors are meant for the model after
// "cannot write <path>: ".
func writeFile(path string, data []byte) (writeOutcome, error) {
	target, st, err := writeTarget(path)
	if err != nil {
		return writeOutcome{}, err
	}
	if st == nil {
		dir := filepath.Dir(target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return writeOutcome{}, fmt.Errorf("cannot create its directory: %v", unwrapPathError(err))
		}
		return writeOutcome{created: true}, replaceFile(target, data, 0o644, nil)
	}
	if err := checkWritable(target, st); err != nil {
		return writeOutcome{}, err
	}
	mode := st.Mode().Perm() | st.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	if _, _, links, _ := fileOwner(st); links > 1 {
		why := fmt.Sprintf("to keep its %d hard links", links)
		return writeOutcome{inPlace: why}, writeInPlace(target, data)
	}
	err = replaceFile(target, data, mode, st)
	if errors.Is(err, errOwnerNotKept) {
		return writeOutcome{inPlace: "to keep its owner"}, writeInPlace(target, data)
	}
	return writeOutcome{}, err
}

// danglingLinkError reports a symbolic link whose target does not exist.
type danglingLinkError struct{ to string }

func (e *danglingLinkError) Error() string {
	return fmt.Sprintf("it is a symbolic link to %s, which does not exist; write the target's path to create it", e.to)
}

// writeTarget returns the file a write to path changes: path itself, or
// the file its symbolic links lead to, with that file's info, or a nil
// info when there is no file.
func writeTarget(path string) (string, fs.FileInfo, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, nil
	}
	if err != nil {
		return "", nil, unwrapPathError(err)
	}
	target := path
	if st.Mode()&fs.ModeSymlink != 0 {
		target, err = filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			to, _ := os.Readlink(path)
			return "", nil, &danglingLinkError{to: to}
		}
		if err != nil {
			return "", nil, unwrapPathError(err)
		}
		if st, err = os.Stat(target); err != nil {
			return "", nil, unwrapPathError(err)
		}
	}
	if !st.Mode().IsRegular() {
		return "", nil, fmt.Errorf("it %v; only regular files are written", &wrongTypeError{st.Mode(), "regular file"})
	}
	return target, st, nil
}

// errOwnerNotKept reports a replacement that could not be given the old
// file's owner; nothing was renamed.
var errOwnerNotKept = errors.New("cannot give the new file the old one's owner")

// replaceFile writes data to a temporary file beside path, gives it mode
// and, when old is not nil, old's owner, and renames it over path. It
// returns errOwnerNotKept, having left path alone, when it cannot chown.
func replaceFile(path string, data []byte, mode fs.FileMode, old fs.FileInfo) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".zot-*.tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file in %s: %v", dir, unwrapPathError(err))
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
		return fmt.Errorf("writing %s: %v", name, unwrapPathError(err))
	}
	// Chown before chmod: a chown may clear the setuid and setgid bits.
	if old != nil {
		if err := keepOwner(tmp, old); err != nil {
			return err
		}
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("setting the mode of %s: %v", name, unwrapPathError(err))
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %v", name, unwrapPathError(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %v", name, unwrapPathError(err))
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("renaming %s over it: %v", name, unwrapPathError(err))
	}
	ok = true
	syncDir(dir)
	return nil
}

// keepOwner gives tmp the owner and group of old when they differ. It
// returns errOwnerNotKept when that is not allowed.
func keepOwner(tmp *os.File, old fs.FileInfo) error {
	uid, gid, _, ok := fileOwner(old)
	if !ok {
		return nil
	}
	st, err := tmp.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %v", tmp.Name(), unwrapPathError(err))
	}
	if tuid, tgid, _, _ := fileOwner(st); tuid == uid && tgid == gid {
		return nil
	}
	if err := tmp.Chown(uid, gid); err != nil {
		return errOwnerNotKept
	}
	return nil
}

// writeInPlace truncates the regular file at path and writes data to it.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|openNonblock, 0)
	if err != nil {
		return unwrapPathError(err)
	}
	return writeOpened(f, data)
}

// writeOpened writes data to f, just opened for writing and truncated,
// when it is a regular file, then syncs and closes it.
func writeOpened(f *os.File, data []byte) error {
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return unwrapPathError(err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("it %v; only regular files are written", &wrongTypeError{st.Mode(), "regular file"})
	}
	if _, err := f.Write(data); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Sync(); err != nil {
		return unwrapPathError(err)
	}
	return unwrapPathError(f.Close())
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
