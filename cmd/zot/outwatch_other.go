//go:build !unix

package main

import "os"

// watchOutput does nothing here: a closed output is noticed at the next
// write instead.
func watchOutput(out *os.File, gone func()) (stop func()) { return func() {} }
