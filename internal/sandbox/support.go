package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// ErrUnavailable is returned (wrapped) when the policy cannot be enforced
// on this system: no Landlock and no bubblewrap.
var ErrUnavailable = errors.New("the sandbox cannot be enforced here")

// Backend names what enforces a policy.
type Backend string

// The backends.
const (
	// BackendLandlock is Landlock for the file system and TCP, and a
	// seccomp filter for every other socket, set on the thread of zot's
	// that forks the command (and ends after it).
	BackendLandlock Backend = "landlock"
	// BackendBwrap is bubblewrap: the file system mounted read-only but
	// for the writable paths, and a network namespace of its own.
	BackendBwrap Backend = "bwrap"
	// BackendNone is no enforcement.
	BackendNone Backend = "none"
)

// Support says what this system offers.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version; 0 without it.
	LandlockABI int
	// Seccomp says the network filter can be installed (Linux on amd64
	// or arm64).
	Seccomp bool
	// Bwrap is the path of bubblewrap, when installed.
	Bwrap string
	// Backend is what enforces a policy here.
	Backend Backend
}

// String describes the support for people.
func (s Support) String() string {
	switch s.Backend {
	case BackendLandlock:
		return fmt.Sprintf("Landlock ABI %d", s.LandlockABI)
	case BackendBwrap:
		return "bubblewrap (" + s.Bwrap + ")"
	}
	return "none (no Landlock in this kernel, and bubblewrap is not installed)"
}

// forceBackend, when set in the environment of zot, chooses the backend
// (landlock, bwrap or none) instead of the best one found: for tests and
// for systems whose Landlock misbehaves.
const forceBackend = "ZOT_SANDBOX_BACKEND"

// Probe returns what this system offers, found once.
var Probe = sync.OnceValue(func() Support {
	s := Support{LandlockABI: landlockABI(), Seccomp: seccompArch != 0}
	if p, err := exec.LookPath("bwrap"); err == nil {
		s.Bwrap = p
	}
	switch {
	case s.LandlockABI >= 1:
		s.Backend = BackendLandlock
	case s.Bwrap != "":
		s.Backend = BackendBwrap
	default:
		s.Backend = BackendNone
	}
	switch Backend(os.Getenv(forceBackend)) {
	case BackendBwrap:
		if s.Bwrap != "" {
			s.Backend = BackendBwrap
		} else {
			s.Backend = BackendNone
		}
	case BackendNone:
		s.Backend = BackendNone
	case BackendLandlock:
		if s.LandlockABI < 1 {
			s.Backend = BackendNone
		}
	}
	return s
})

// rulesOf is what the kernel is told for p.
func rulesOf(p Policy) execOptions {
	return execOptions{mode: p.Mode, network: p.Network, writable: p.WritableRoots()}
}

// execOptions are the rules a confined thread applies.
type execOptions struct {
	mode     Mode
	network  bool
	writable []string
}

// bwrapArgs are bubblewrap's arguments up to prog: everything read-only,
// the writable roots bound writable, a fresh /dev and /proc, and a
// network namespace of its own when the network is off.
func bwrapArgs(p Policy, prog string) []string {
	a := []string{"--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	if !p.Mode.Confines() {
		a = []string{"--die-with-parent", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	}
	for _, r := range p.WritableRoots() {
		if _, err := os.Stat(r); err == nil {
			a = append(a, "--bind", r, r)
		}
	}
	if !p.Network {
		a = append(a, "--unshare-net")
	}
	return append(a, "--", prog)
}
