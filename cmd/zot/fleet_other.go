//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
)

// execFleet runs zot-fleet and exits with its status.
func execFleet(path string, argv []string) error {
	c := exec.Command(path, argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &exitError{code: exit.ExitCode()}
	}
	if err != nil {
		return &exitError{code: 1, msg: "zot: running " + path + ": " + err.Error()}
	}
	return nil
}
