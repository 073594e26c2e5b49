//go:build linux

package subproc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr makes the child lead a new process group and, with
// pdeathsig, be killed when the thread that starts it exits; the start must
// then hold its thread (lock is true).
func sysProcAttr(pdeathsig bool) (attr *syscall.SysProcAttr, lock bool) {
	attr = &syscall.SysProcAttr{Setpgid: true}
	if pdeathsig {
		attr.Pdeathsig = syscall.SIGKILL
	}
	return attr, pdeathsig
}

// groupAlive reports whether any process of group pgid runs. Zombies do not
// count: in containers whose init does not reap orphans, an exited
// grandchild can linger as a zombie indefinitely, and waiting for it would
// only delay Stop.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
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
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
