//go:build !linux

package jsonrpc

import "io"

// unsentProbe finds nothing outside Linux: progress is seen as writes
// return.
func unsentProbe(io.Writer) func() (int, bool) { return nil }
