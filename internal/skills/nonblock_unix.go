//go:build unix

package skills

import "syscall"

// openNonblock makes opening a named pipe return at once instead of
// waiting for a writer; reads of regular files ignore it.
const openNonblock = syscall.O_NONBLOCK
