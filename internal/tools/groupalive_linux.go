//go:build linux

package tools

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// groupAlive reports whether any process of the command's group is still
// running. Zombies do not count: in containers whose init does not reap
// orphans, an exited child can linger as a zombie indefinitely, and waiting
// for it would only delay the result.
func groupAlive(cmd *exec.Cmd) bool {
	if signalGroup(cmd, syscall.Signal(0)) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	pgid := []byte(strconv.Itoa(cmd.Process.Pid))
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and
		// parentheses, so parse after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], pgid) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
