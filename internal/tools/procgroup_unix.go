//go:build unix

package tools

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group, so
// that it and everything it starts can be signalled together.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks the command's process group to exit (SIGTERM).
func terminateGroup(cmd *exec.Cmd) error { return signalGroup(cmd, syscall.SIGTERM) }

// killGroup kills the command's process group (SIGKILL).
func killGroup(cmd *exec.Cmd) error { return signalGroup(cmd, syscall.SIGKILL) }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return errors.New("process not started")
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
