package tools

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// The tools read only regular files and list only directories. Opening a
// named pipe for reading blocks until a writer appears, and a device or
// socket may never end, so the type is checked before opening and again on
// the opened file: a path swapped for a pipe between the two checks is
// opened with O_NONBLOCK where the platform has it, which returns at once.
//
// Every read of file content goes through a capReader, which stops at a cap
// on the bytes actually read (files under /proc stat as size 0 however much
// they hold) and when the call's context ends, between any two reads.

// wrongTypeError reports a path that is not of the type a tool opens.
type wrongTypeError struct {
	mode fs.FileMode // the path's type
	want string      // the type wanted: "regular file", "directory"
}

func (e *wrongTypeError) Error() string {
	return "is a " + fileKind(e.mode) + ", not a " + e.want
}

// fileKind names the type of a file for messages: "directory", "named
// pipe", "socket", ...
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// isSpecial reports whether m is neither a regular file, a directory nor a
// symbolic link.
func isSpecial(m fs.FileMode) bool {
	return !m.IsRegular() && !m.IsDir() && m&fs.ModeSymlink == 0
}

// openRegular opens path, following symbolic links, for reading if it is a
// regular file. Otherwise it returns a *wrongTypeError and the file's
// info, without blocking on the file.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	return openOfType(path, "regular file", fs.FileMode.IsRegular)
}

// openDir opens path, following symbolic links, if it is a directory, like
// openRegular.
func openDir(path string) (*os.File, fs.FileInfo, error) {
	return openOfType(path, "directory", fs.FileMode.IsDir)
}

func openOfType(path, want string, ok func(fs.FileMode) bool) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !ok(st.Mode()) {
		return nil, st, &wrongTypeError{st.Mode(), want}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !ok(st.Mode()) {
		f.Close()
		return nil, st, &wrongTypeError{st.Mode(), want}
	}
	return f, st, nil
}

// readDirSorted lists the directory path sorted by name, refusing to open
// anything but a directory. Like os.ReadDir it returns the entries it read
// before an error.
func readDirSorted(path string) ([]fs.DirEntry, error) {
	f, _, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// errCapped reports a file that goes on past the bytes a tool reads of it.
var errCapped = errors.New("file goes on past the read limit")

// capReader reads r until ctx ends or more than max bytes have been read.
// It then returns ctx.Err() or errCapped from every Read; max+1 bytes are
// delivered before errCapped, so a file of exactly max bytes reads to EOF.
type capReader struct {
	ctx context.Context
	r   io.Reader
	max int64
	n   int64 // bytes delivered
}

func (c *capReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.n > c.max {
		return 0, errCapped
	}
	if room := c.max + 1 - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readAllCapped reads r to its end under ctx. Past limit bytes it stops
// with errCapped and the first limit+1 bytes. sizeHint (a stat size,
// possibly 0) presizes the buffer.
func readAllCapped(ctx context.Context, r io.Reader, sizeHint, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(min(max(sizeHint, 0), limit) + bytes.MinRead))
	_, err := buf.ReadFrom(&capReader{ctx: ctx, r: r, max: limit})
	return buf.Bytes(), err
}
