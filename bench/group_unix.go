//go:build unix

package bench

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// ownGroup makes the child lead a process group of its own, so that the
// tools it runs can be killed with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills a child that has not been reaped yet, and its group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// exitMaxRSS returns the peak resident set size in bytes that the kernel
// reported for an exited child, or 0.
func exitMaxRSS(state *os.ProcessState) int64 {
	if state == nil {
		return 0
	}
	ru, ok := state.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes on macOS
	}
	return ru.Maxrss * 1024 // kilobytes elsewhere
}
