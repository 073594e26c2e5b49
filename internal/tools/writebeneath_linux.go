//go:build linux

package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A write the sandbox confines is made relative to a folder of the
// writable root, opened once, never through a path that the kernel
// resolves again from the top: the folders of the file are opened with
// openat2(2) beneath the root (RESOLVE_BENEATH: no "..", no absolute
// symbolic link, no link whose target leaves the root;
// RESOLVE_NO_MAGICLINKS: no /proc/…/fd link), those that are missing
// made one at a time in the folder opened before, and the file itself is
// created, renamed over and opened in that last folder without following
// a symbolic link. A link planted or swapped in anywhere on the way since
// the sandbox checked the path fails the write instead of leading it out.
// Where the kernel has no openat2 (before Linux 5.6) each folder is
// opened in the one before with O_NOFOLLOW: any symbolic link on the way
// fails the write, which is stricter still.

// openat2Missing is set once openat2 answered ENOSYS (or, in tests, to
// take the other way).
var openat2Missing atomic.Bool

// errSwapped is a symbolic link found on the way to a confined write:
// something changed the path after the sandbox checked it.
var errSwapped = errors.New("a symbolic link appeared on its path after the sandbox checked it (or leads outside the writable folder); nothing was written")

// writeBeneath puts data in the file rel (relative, no "..") beneath the
// folder root, as writeFile does, resolving nothing outside root. A file
// with other hard links is written in place only when linksOK (it was
// allowed by itself): else its other names could be anywhere, and the
// sandbox refused such a file when it checked the path.
func writeBeneath(root, rel string, data []byte, linksOK bool) (writeOutcome, error) {
	rel = filepath.Clean(rel)
	if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return writeOutcome{}, fmt.Errorf("%s is not a file beneath %s", rel, root)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return writeOutcome{}, fmt.Errorf("opening the writable folder %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	dir, name := filepath.Split(rel)
	dirFD, err := openDirBeneath(rootFD, filepath.Clean(dir))
	if err != nil {
		return writeOutcome{}, err
	}
	defer unix.Close(dirFD)
	shownDir := filepath.Join(root, dir)

	var st unix.Stat_t
	err = unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return writeOutcome{created: true}, replaceAt(dirFD, shownDir, name, data, 0o644, nil)
	case err != nil:
		return writeOutcome{}, err
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return writeOutcome{}, errSwapped
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return writeOutcome{}, fmt.Errorf("it %w; only regular files are written", &wrongTypeError{fileModeOf(st.Mode), "regular file"})
	}
	if err := unix.Faccessat(dirFD, name, accessWrite, 0); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return writeOutcome{}, fmt.Errorf("%w: the file (owner %d, group %d, mode %v) is not writable by user %d",
				err, st.Uid, st.Gid, fileModeOf(st.Mode).Perm(), os.Getuid())
		}
		return writeOutcome{}, err
	}
	if st.Nlink > 1 {
		if !linksOK {
			return writeOutcome{}, fmt.Errorf("the file has %d hard links since the sandbox checked it, and the others may be outside the writable folders; nothing was written", st.Nlink)
		}
		why := fmt.Sprintf("to keep its %d hard links", st.Nlink)
		return writeOutcome{inPlace: why}, writeInPlaceAt(dirFD, name, data)
	}
	err = replaceAt(dirFD, shownDir, name, data, st.Mode&0o7777, &st)
	if errors.Is(err, errOwnerNotKept) {
		return writeOutcome{inPlace: "to keep its owner"}, writeInPlaceAt(dirFD, name, data)
	}
	return writeOutcome{}, err
}

// openDirBeneath opens the folder rel ("." for root itself) beneath the
// folder open as rootFD, making the folders that are missing (0755).
func openDirBeneath(rootFD int, rel string) (int, error) {
	cur, err := unix.Openat(rootFD, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if rel == "." {
		return cur, nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		next, err := openNext(rootFD, cur, strings.Join(parts[:i+1], "/"), part)
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(cur, part, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(cur)
				return -1, fmt.Errorf("cannot create its directory: %w", err)
			}
			next, err = openNext(rootFD, cur, strings.Join(parts[:i+1], "/"), part)
		}
		if err != nil {
			var st unix.Stat_t
			link := unix.Fstatat(cur, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
			unix.Close(cur)
			if link || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
				return -1, errSwapped
			}
			return -1, fmt.Errorf("cannot create its directory: %w", err)
		}
		unix.Close(cur)
		cur = next
	}
	return cur, nil
}

// openNext opens the folder prefix beneath rootFD with openat2, or, where
// the kernel has none, its last part in the folder cur without following
// a symbolic link.
func openNext(rootFD, cur int, prefix, part string) (int, error) {
	if !openat2Missing.Load() {
		fd, err := unix.Openat2(rootFD, prefix, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		if !errors.Is(err, unix.ENOSYS) {
			return fd, err
		}
		openat2Missing.Store(true)
	}
	return unix.Openat(cur, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// replaceAt is replaceFile in the folder dirFD (shown as dir): a
// temporary file beside name, given mode and old's owner, renamed over
// name.
func replaceAt(dirFD int, dir, name string, data []byte, mode uint32, old *unix.Stat_t) error {
	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = "." + name + ".zot-" + strconv.FormatInt(time.Now().UnixNano()+int64(i), 36) + ".tmp"
		var err error
		fd, err = unix.Openat(dirFD, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || i >= 100 {
			return fmt.Errorf("creating a temporary file in %s: %w", dir, err)
		}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	ok := false
	defer func() {
		if !ok {
			f.Close()
			unix.Unlinkat(dirFD, tmp, 0)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", f.Name(), unwrapPathError(err))
	}
	// Chown before chmod: a chown may clear the setuid and setgid bits.
	if old != nil {
		var cur unix.Stat_t
		if err := unix.Fstat(fd, &cur); err != nil {
			return fmt.Errorf("stat %s: %w", f.Name(), err)
		}
		if cur.Uid != old.Uid || cur.Gid != old.Gid {
			if err := unix.Fchown(fd, int(old.Uid), int(old.Gid)); err != nil {
				return errOwnerNotKept
			}
		}
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", f.Name(), unwrapPathError(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", f.Name(), unwrapPathError(err))
	}
	if err := unix.Renameat(dirFD, tmp, dirFD, name); err != nil {
		return fmt.Errorf("renaming %s over it: %w", f.Name(), err)
	}
	ok = true
	_ = unix.Fsync(dirFD)
	return nil
}

// writeInPlaceAt truncates the regular file name in the folder dirFD,
// not following a symbolic link, and writes data to it.
func writeInPlaceAt(dirFD int, name string, data []byte) error {
	fd, err := unix.Openat(dirFD, name, unix.O_WRONLY|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return errSwapped
	}
	if err != nil {
		return err
	}
	return writeOpened(os.NewFile(uintptr(fd), name), data)
}

// fileModeOf is the fs.FileMode of a stat(2) mode.
func fileModeOf(m uint32) os.FileMode {
	mode := os.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= os.ModeDir
	case unix.S_IFLNK:
		mode |= os.ModeSymlink
	case unix.S_IFIFO:
		mode |= os.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= os.ModeSocket
	case unix.S_IFCHR:
		mode |= os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		mode |= os.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return mode
}
