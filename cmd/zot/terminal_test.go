package main

import (
	"strings"
	"testing"
)

// TestNotATerminal: without a terminal on stdin and stdout, zot keeps
// its behaviour for programs and says why the client did not start: a
// bare zot prints the help (and a line on stderr), a prompt is a usage
// error that names -p, and the terminal's own flags are refused.
func TestNotATerminal(t *testing.T) {
	stdout, stderr, code := runZot(t, "", nil)
	if code != 0 || !strings.Contains(stdout, "USAGE:") || !strings.Contains(stderr, "not a terminal") {
		t.Errorf("bare zot: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	_, stderr, code = runZot(t, "", nil, "fix the test")
	if code != 2 || !strings.Contains(stderr, `zot -p "fix the test" runs it once`) {
		t.Errorf(`zot "fix the test": exit %d, stderr %q`, code, stderr)
	}
	_, stderr, code = runZot(t, "", nil, "attach")
	if code != 1 || !strings.Contains(stderr, "zot attach needs a terminal") {
		t.Errorf("zot attach: exit %d, stderr %q", code, stderr)
	}
	for _, flag := range []string{"--yolo", "--no-yolo", "-r"} {
		_, stderr, code = runZot(t, "", nil, flag)
		if code != 2 || !strings.Contains(stderr, "needs a terminal") {
			t.Errorf("zot %s: exit %d, stderr %q", flag, code, stderr)
		}
	}
}
