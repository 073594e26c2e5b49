// Package zotbin gives the tests that drive zot as a subprocess the
// binary to run: the one named by $ZOT_BIN (make test builds bin/zot and
// sets it), or else one built from this module for the test run.
package zotbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Tags are the build tags zot is built with, the Makefile's GO_TAGS (a
// test of cmd/zot holds the two together), so that the tests run the
// binary users install.
const Tags = "urfave_cli_no_template"

// Main is a TestMain body: it sets *path to the binary, runs the tests
// and removes a binary it built. race builds it with the race detector.
// It returns the exit code for os.Exit.
func Main(m *testing.M, path *string, race bool) int {
	if p := os.Getenv("ZOT_BIN"); p != "" {
		*path = p
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "zot-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*path = filepath.Join(dir, "zot")
	args := []string{"build", "-tags", Tags, "-o", *path}
	if race {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "zot.dev/zot/cmd/zot")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zot:", err)
		return 1
	}
	return m.Run()
}
