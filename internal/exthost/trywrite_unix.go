//go:build unix

package exthost

import (
	"errors"
	"os"
	"syscall"
)

// directWriter makes writes to a pipe that never block. Its methods are
// called under the outbox's lock.
type directWriter struct {
	rc  syscall.RawConn // nil when f has none: every write is left to the goroutine
	try func(fd uintptr) bool
	b   []byte
	n   int
	err error
}

func newDirectWriter(f *os.File) *directWriter {
	d := &directWriter{}
	if rc, err := f.SyscallConn(); err == nil {
		d.rc = rc
	}
	d.try = func(fd uintptr) bool {
		d.n, d.err = syscall.Write(int(fd), d.b)
		return true // one attempt: never wait for room
	}
	return d
}

// write makes one write of b that does not block and returns how much
// the pipe took: 0 when it has no room. The pipe must be in non-blocking
// mode, as the write end of an os.Pipe is.
func (d *directWriter) write(b []byte) (int, error) {
	if d.rc == nil {
		return 0, nil
	}
	d.b = b
	err := d.rc.Write(d.try)
	d.b = nil
	switch {
	case err != nil:
		return 0, nil // closed: the goroutine meets the error
	case errors.Is(d.err, syscall.EAGAIN), errors.Is(d.err, syscall.EINTR):
		return 0, nil
	case d.err != nil:
		return 0, d.err
	}
	return max(d.n, 0), nil
}
