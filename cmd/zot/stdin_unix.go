//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns f read through the runtime's poller when it is a pipe
// or a socket in blocking mode (as zot rpc's stdin is when a program
// spawns it): a read that waits then parks the goroutine instead of a
// thread in a blocking read, so a command that arrives while the agent
// works (a client tool's result, an abort) is read as soon as it is
// written rather than after the thread gets its processor back
// (measured: BenchmarkClientToolRoundTrip). A terminal, a file, or a
// descriptor already non-blocking (the runtime polls it already) is
// returned as it is: O_NONBLOCK on a terminal would be seen by the shell
// that shares it. restore puts the descriptor back in blocking mode for
// whoever shares it after zot.
func pollable(f *os.File) (in *os.File, restore func()) {
	none := func() {}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, none
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return f, none
	}
	fd := -1
	// Control, unlike Fd, leaves the descriptor's mode as it is.
	if rc.Control(func(d uintptr) {
		if fl, err := unix.FcntlInt(d, unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK == 0 {
			fd = int(d)
		}
	}) != nil || fd < 0 {
		return f, none
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return f, none
	}
	return os.NewFile(uintptr(fd), f.Name()), func() { _ = unix.SetNonblock(fd, false) }
}
