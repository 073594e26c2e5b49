package daemon

import (
	"bytes"
	"os"
	"strconv"
	"sync"
)

var (
	selfNNPOnce sync.Once
	selfNNP     bool
)

// selfNoNewPrivs is whether the daemon itself runs with no_new_privs
// (under a service manager or a container that sets it): then a client's
// flag says nothing about it. It is read once, when first asked, and not
// in a package init, which every zot process would pay.
func selfNoNewPrivs() bool {
	selfNNPOnce.Do(func() { selfNNP = noNewPrivs("self") })
	return selfNNP
}

// confinedPeer reports whether the process pid runs with no_new_privs
// while the daemon does not: what every command of zot's sandbox does
// (Landlock and bubblewrap set it, and no child can clear it). Such a
// client would drive sessions outside the sandbox it runs in.
func confinedPeer(pid int) bool {
	if pid <= 0 || selfNoNewPrivs() {
		return false
	}
	return noNewPrivs(strconv.Itoa(pid))
}

// noNewPrivs reads the NoNewPrivs line of /proc/<proc>/status.
func noNewPrivs(proc string) bool {
	data, err := os.ReadFile("/proc/" + proc + "/status")
	if err != nil {
		return false
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("NoNewPrivs:")); ok {
			return string(bytes.TrimSpace(v)) == "1"
		}
	}
	return false
}
