//go:build !unix

package subproc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// hasGroups says that there are no process groups here: signals reach the
// child alone, and what it starts is out of reach.
const hasGroups = false

// The signals of the ladder; without signals, only a kill.
var (
	sigTerm = os.Kill
	sigKill = os.Kill
)

// sysProcAttr sets nothing: neither process groups nor a parent-death
// signal exist here.
func sysProcAttr(bool) (attr *syscall.SysProcAttr, lock bool) { return nil, false }

// signalGroup sends sig to the child itself.
func (p *Process) signalGroup(sig os.Signal) error {
	err := p.cmd.Process.Signal(sig)
	if err == nil || errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return fmt.Errorf("sending %v to process %d: %w", sig, p.pid, err)
}

// groupAlive is never called without process groups.
func groupAlive(int) bool { return false }
