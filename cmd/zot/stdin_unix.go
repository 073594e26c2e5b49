//go:build unix

package main

import (
	"os"
	"syscall"
)

// pollable returns f read through the runtime's poller when it is a pipe
// or a socket (as zot rpc's stdin is when a program spawns it): a read
// that waits then parks the goroutine instead of a thread in a blocking
// read, so a command that arrives while the agent works (a client tool's
// result, an abort) is read as soon as it is written rather than after
// the thread gets its processor back (measured: BenchmarkClientToolRoundTrip).
// A terminal, a file or anything else is returned as it is, since
// O_NONBLOCK on a terminal would be seen by the shell that shares it.
// restore puts the descriptor back in blocking mode for whoever shares
// it after zot.
func pollable(f *os.File) (in *os.File, restore func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}
	}
	fd := int(f.Fd()) // leaves f blocking; the descriptor is shared with the new File
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f, func() {}
	}
	return os.NewFile(uintptr(fd), f.Name()), func() { _ = syscall.SetNonblock(fd, false) }
}
