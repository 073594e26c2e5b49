//go:build unix && !linux

package subproc

import "syscall"

// sysProcAttr makes the child lead a new process group. There is no
// parent-death signal here, so there is no thread to hold.
func sysProcAttr(bool) (attr *syscall.SysProcAttr, lock bool) {
	return &syscall.SysProcAttr{Setpgid: true}, false
}

// groupAlive reports whether any process of group pgid remains, zombies
// included.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}
