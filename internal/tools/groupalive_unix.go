//go:build unix && !linux

package tools

import (
	"os/exec"
	"syscall"
)

// groupAlive reports whether any process of the command's group remains.
func groupAlive(cmd *exec.Cmd) bool {
	return signalGroup(cmd, syscall.Signal(0)) == nil
}
