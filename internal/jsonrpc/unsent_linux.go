package jsonrpc

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// UnsentProbe returns a function that tells how many bytes written to w
// its reader has not read yet, as the kernel holds them: for a socket
// the send queue (SIOCOUTQ), for a pipe what the pipe holds (FIONREAD, which is TIOCINQ).
// Fewer than at the last look means the client read some, even when no
// write of ours has returned since (a blocked write wakes only once the
// reader has made much room). nil when w is neither. A transport over a
// socket of its own (a WebSocket's TCP connection) implements Unread
// with it.
func UnsentProbe(w io.Writer) func() (int, bool) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	req := uint(0)
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFSOCK:
			req = unix.SIOCOUTQ
		case unix.S_IFIFO:
			req = unix.TIOCINQ // FIONREAD
		}
	})
	if req == 0 {
		return nil
	}
	return func() (int, bool) {
		n, ok := 0, false
		_ = rc.Control(func(fd uintptr) {
			v, err := unix.IoctlGetInt(int(fd), req)
			n, ok = v, err == nil
		})
		return n, ok
	}
}
