//go:build !unix

package main

import "os"

// pollable returns f as it is: only unix pipes and sockets are moved
// onto the poller (stdin_unix.go).
func pollable(f *os.File) (*os.File, func()) { return f, func() {} }
