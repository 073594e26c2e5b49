//go:build !unix

package skills

// openNonblock is zero where opening a file has no non-blocking mode.
const openNonblock = 0
