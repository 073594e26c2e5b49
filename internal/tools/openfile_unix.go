//go:build unix

package tools

import "syscall"

// openNonblock makes opening a named pipe return at once instead of waiting
// for a writer; reads of regular files and directories ignore it.
const openNonblock = syscall.O_NONBLOCK
