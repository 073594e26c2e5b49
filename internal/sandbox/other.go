//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// seccompArch is 0: no seccomp outside Linux.
const seccompArch = 0

// landlockABI is 0 outside Linux.
func landlockABI() int { return 0 }

// confine fails outside Linux.
func confine(execOptions) error {
	return fmt.Errorf("no sandbox on %s", runtime.GOOS)
}

// hardLinks is 1 outside Linux (where the sandbox never confines).
func hardLinks(string) uint64 { return 1 }
