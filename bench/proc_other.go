//go:build !linux

package bench

import (
	"errors"
	"fmt"
)

// errNoProc is returned where /proc is not available; the harness falls back
// to what the kernel reports when the child exits.
var errNoProc = errors.New("no /proc on this system")

func readCPU(int) (cpuSample, error) {
	return cpuSample{}, fmt.Errorf("reading CPU time: %w", errNoProc)
}

func readPeakRSS(int) (int64, error) { return 0, fmt.Errorf("reading peak RSS: %w", errNoProc) }

func readResident(int) (int64, int64, error) {
	return 0, 0, fmt.Errorf("reading resident memory: %w", errNoProc)
}

func readResidentPages(int) (*Resident, error) {
	return nil, fmt.Errorf("reading resident pages: %w", errNoProc)
}
