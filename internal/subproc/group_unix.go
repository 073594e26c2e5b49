//go:build unix

package subproc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// hasGroups says that children lead process groups of their own here.
const hasGroups = true

// The signals of the ladder.
const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// signalGroup sends sig to the child's process group. When there is no such
// group (every member has exited, or the child left it) it signals the
// child itself if it has not been reaped yet.
func (p *Process) signalGroup(sig syscall.Signal) error {
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		if p.hasExited() {
			return nil
		}
		err = p.cmd.Process.Signal(sig)
		if err == nil || errors.Is(err, os.ErrProcessDone) {
			return nil
		}
		return fmt.Errorf("sending %v to process %d: %w", sig, p.pid, err)
	}
	if err != nil {
		return fmt.Errorf("sending %v to process group %d: %w", sig, p.pid, err)
	}
	return nil
}
