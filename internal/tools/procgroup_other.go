//go:build !unix

package tools

import (
	"errors"
	"os/exec"
)

// setProcessGroup does nothing where process groups are not supported.
func setProcessGroup(*exec.Cmd) {}

// terminateGroup kills the command's process; without process groups there
// is no gentler way and no reach to its children.
func terminateGroup(cmd *exec.Cmd) error { return killGroup(cmd) }

// killGroup kills the command's process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return errors.New("process not started")
	}
	return cmd.Process.Kill()
}

// groupAlive reports false: without process groups the children cannot be
// tracked.
func groupAlive(*exec.Cmd) bool { return false }
