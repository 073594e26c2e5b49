//go:build unix

package main

import (
	"os"
	"syscall"
)

// execFleet replaces zot with zot-fleet.
func execFleet(path string, argv []string) error {
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return &exitError{code: 1, msg: "zot: running " + path + ": " + err.Error()}
	}
	return nil
}
