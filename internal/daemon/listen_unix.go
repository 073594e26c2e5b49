//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"zot.dev/zot/internal/jsonrpc"
)

// maxSocketPath is the longest path a Unix socket address holds.
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Endpoint is a listening socket and the lock that makes it this
// process's. It is a jsonrpc.StreamListener: Accept yields only clients
// of the daemon's own uid.
type Endpoint struct {
	path string
	l    *net.UnixListener
	lock *os.File
	ino  uint64 // the socket file's inode, to remove it only if still ours
	log  io.Writer
	uid  int

	closeOnce sync.Once
}

// Listen takes the endpoint at path: it makes the directory (0700),
// takes <path>.lock, removes a stale socket left by a daemon that is
// gone, and listens with the socket made 0600.
func Listen(path string, log io.Writer) (*Endpoint, error) {
	if log == nil {
		log = io.Discard
	}
	if err := fits(path); err != nil {
		return nil, fmt.Errorf("zot daemon: %w", err)
	}
	dir := filepath.Dir(path)
	if err := secureDir(dir, log); err != nil {
		return nil, err
	}
	lock, err := takeLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = lock.Close()
		}
	}()
	if st, err := os.Lstat(path); err == nil {
		if st.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("zot daemon: %s exists and is not a socket; remove it or set ZOT_SOCKET", path)
		}
		if owner := ownerOf(st); owner != os.Getuid() {
			return nil, fmt.Errorf("zot daemon: the socket %s belongs to uid %d, not to this user (uid %d); zot does not remove it: set ZOT_SOCKET to a path in a directory of your own", path, owner, os.Getuid())
		}
		// The lock is ours, so no daemon should serve this socket: it
		// was left by one that died. Unless the lock file was removed
		// under a live daemon: then the socket still answers, and stays.
		c, err := net.DialTimeout("unix", path, time.Second)
		switch {
		case err == nil:
			_ = c.Close()
			return nil, fmt.Errorf("zot daemon: a process serves %s though its lock file %s.lock was removed (another zot daemon?); stop it first", path, path)
		case !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("zot daemon: cannot tell whether a process serves %s, so it is left alone: %w", path, err)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("zot daemon: removing the stale socket: %w", err)
		}
		fmt.Fprintf(log, "zot daemon: removed the stale socket %s\n", path)
	}
	old := syscall.Umask(0o177) // the socket is born 0600: no moment when others may connect
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("zot daemon: listening on %s: %w", path, err)
	}
	l.SetUnlinkOnClose(false) // removed by Close, and only if still ours
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("zot daemon: making the socket private: %w", err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("zot daemon: %w", err)
	}
	ok = true
	return &Endpoint{path: path, l: l, lock: lock, ino: inode(st), log: log, uid: os.Getuid()}, nil
}

// secureDir makes dir (0700) or checks it: it must be the daemon user's
// (or root's, for a shared sticky directory like /tmp) and not writable
// by others unless sticky. A directory of the user's that others can
// read or enter is tightened to 0700.
func secureDir(dir string, log io.Writer) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("zot daemon: making the socket's directory: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("zot daemon: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("zot daemon: %s is not a directory", dir)
	}
	uid := os.Getuid()
	owner := ownerOf(st)
	sticky := st.Mode()&fs.ModeSticky != 0
	switch {
	case sticky && (owner == uid || owner == 0):
		// A shared directory (/tmp): the socket itself is 0600, and the
		// sticky bit keeps others from replacing it.
		return nil
	case owner != uid:
		return fmt.Errorf("zot daemon: the socket's directory %s belongs to uid %d, not to this user (uid %d)", dir, owner, uid)
	case st.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("zot daemon: making %s private: %w", dir, err)
		}
		fmt.Fprintf(log, "zot daemon: made %s private (0700; it was %04o)\n", dir, st.Mode().Perm())
	}
	return nil
}

// takeLock opens and locks the endpoint's lock file, or says which
// daemon holds it. The file is never removed: removing it would let two
// daemons lock two different files of one name.
//
// The lock may sit in a shared sticky directory (ZOT_SOCKET=/tmp/…),
// where another user can plant a name first. So a symbolic link is never
// followed (O_NOFOLLOW), and a file that is there already is used only
// when it is a regular file of this user with one link; anything else is
// refused with what it is, and never truncated or written.
func takeLock(path string) (*os.File, error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := ""
		b := make([]byte, 32)
		if n, _ := f.ReadAt(b, 0); n > 0 {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
		}
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("zot daemon: another zot daemon%s serves %s: stop it, or set ZOT_SOCKET to serve elsewhere", holder, strings.TrimSuffix(path, ".lock"))
		}
		return nil, fmt.Errorf("zot daemon: locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// openLock opens the lock file at path: a new one is created 0600; one
// already there must be a regular file of this user with one link (it
// is made 0600 if it was wider).
func openLock(path string) (*os.File, error) {
	const flags = os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	f, err := os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(path, flags, 0)
	}
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode().Type() == fs.ModeSymlink {
			return nil, lockRefused(path, st, "is a symbolic link")
		}
		return nil, fmt.Errorf("zot daemon: opening the lock file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("zot daemon: the lock file %s: %w", path, err)
	}
	var why string
	switch sys, _ := st.Sys().(*syscall.Stat_t); {
	case !st.Mode().IsRegular():
		why = "is not a regular file"
	case ownerOf(st) != os.Getuid():
		why = fmt.Sprintf("belongs to uid %d, not to this user (uid %d)", ownerOf(st), os.Getuid())
	case sys != nil && sys.Nlink != 1:
		why = fmt.Sprintf("has %d hard links", sys.Nlink)
	}
	if why != "" {
		_ = f.Close()
		return nil, lockRefused(path, st, why)
	}
	if st.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("zot daemon: making the lock file %s private: %w", path, err)
		}
	}
	return f, nil
}

// lockRefused is the error for a lock file that zot does not use.
func lockRefused(path string, st fs.FileInfo, why string) error {
	return fmt.Errorf("zot daemon: the lock file %s %s (owner uid %d); zot does not use, change or remove it: "+
		"remove it if it is not yours to keep, or set ZOT_SOCKET to a path in a directory of your own", path, why, ownerOf(st))
}

// Addr returns the socket's path.
func (e *Endpoint) Addr() string { return e.path }

// Accept returns the next client of the daemon's uid. Clients of another
// uid are logged with their pid and disconnected.
func (e *Endpoint) Accept() (jsonrpc.Stream, error) {
	for {
		c, err := e.l.AcceptUnix()
		if err != nil {
			return jsonrpc.Stream{}, err
		}
		uid, pid, err := peerCred(c)
		if err != nil {
			fmt.Fprintf(e.log, "zot daemon: refused a client: reading its credentials: %v\n", err)
			_ = c.Close()
			continue
		}
		if uid >= 0 && uid != e.uid {
			fmt.Fprintf(e.log, "zot daemon: refused a client of uid %d (pid %d): only uid %d may connect\n", uid, pid, e.uid)
			_ = c.Close()
			continue
		}
		if confinedPeer(pid) {
			// A command in zot's sandbox reaches this socket (a path); a
			// client here makes sessions whose sandbox it chooses.
			fmt.Fprintf(e.log, "zot daemon: refused a client (pid %d) that runs with no_new_privs, as a command in a sandbox does: from there it could run what its sandbox forbids\n", pid)
			_ = c.Close()
			continue
		}
		label := "unix"
		if uid >= 0 {
			label = fmt.Sprintf("unix:pid=%d,uid=%d", pid, uid)
		}
		return jsonrpc.Stream{ReadWriteCloser: c, Peer: jsonrpc.Peer{Transport: "unix", UID: uid, PID: pid, Label: label}}, nil
	}
}

// Close stops listening, removes the socket if it is still the one this
// endpoint made, and releases the lock.
func (e *Endpoint) Close() error {
	var err error
	e.closeOnce.Do(func() {
		err = e.l.Close()
		if st, serr := os.Lstat(e.path); serr == nil && inode(st) == e.ino {
			if rerr := os.Remove(e.path); rerr != nil && err == nil {
				err = rerr
			}
		}
		_ = e.lock.Close() // releases the flock
	})
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}

func ownerOf(st fs.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}
