//go:build linux && !amd64 && !arm64

package sandbox

// No seccomp filter for this architecture: the network is cut by
// Landlock (TCP only) or bubblewrap.
const (
	seccompArch     = 0
	sysSocket       = 0
	sysIOUringSetup = 0
	x32Bit          = 0
)
