//go:build !unix

package sessionfile

// openNonblock is zero where opening a file has no non-blocking mode.
const openNonblock = 0
