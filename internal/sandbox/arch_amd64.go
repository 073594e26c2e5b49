//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// The seccomp filter's view of this architecture.
const (
	seccompArch     = unix.AUDIT_ARCH_X86_64
	sysSocket       = unix.SYS_SOCKET
	sysIOUringSetup = unix.SYS_IO_URING_SETUP
	x32Bit          = 0x40000000
)
