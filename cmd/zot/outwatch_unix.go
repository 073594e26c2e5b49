//go:build unix

package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// watchOutput calls gone once when out's reader disappears: the pipe's
// read end closed (the embedder died, or `head` has read enough) or the
// terminal hung up. It needs no write to find out, so zot notices even
// while a tool runs silently. stop ends the watch and waits for it.
func watchOutput(out *os.File, gone func()) (stop func()) {
	wake, wakeW, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{
			{Fd: int32(out.Fd())},                       // no events asked: only POLLERR and POLLHUP come back
			{Fd: int32(wake.Fd()), Events: unix.POLLIN}, // stop was called
		}
		for {
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
			if fds[0].Revents&unix.POLLNVAL != 0 {
				return
			}
		}
	}()
	return func() {
		wakeW.Close()
		<-done
		wake.Close()
	}
}
