//go:build !unix

package bench

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where process groups are not available.
func ownGroup(*exec.Cmd) {}

// killGroup kills the child.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// exitMaxRSS is not known here.
func exitMaxRSS(*os.ProcessState) int64 { return 0 }
