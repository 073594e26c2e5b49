package daemon

import (
	"fmt"
	"net"
	"syscall"
)

// peerCred returns the uid and pid of the process at the other end of c,
// read with SO_PEERCRED.
func peerCred(c *net.UnixConn) (uid, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, -1, err
	}
	var cred *syscall.Ucred
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		cred, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, -1, err
	}
	if gerr != nil {
		return -1, -1, fmt.Errorf("SO_PEERCRED: %w", gerr)
	}
	return int(cred.Uid), int(cred.Pid), nil
}
