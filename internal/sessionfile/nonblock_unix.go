//go:build unix

package sessionfile

import "syscall"

// openNonblock makes opening a named pipe return at once instead of
// waiting for the other end; reads and writes of regular files ignore it.
const openNonblock = syscall.O_NONBLOCK
