package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI asks the kernel for its Landlock ABI version; 0 when it has
// none (or it is disabled).
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// Access rights of the file system that the sandbox handles: every kind
// of change. Reading and executing stay allowed everywhere.
const (
	fsWriteV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// deviceWrites are what the device files every shell writes to keep.
	deviceWrites = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
)

// devices are the device files a confined command may still write: the
// null device and its kin, and terminals.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/random", "/dev/urandom"}

// handledFS is what the sandbox handles at Landlock ABI abi.
func handledFS(abi int) uint64 {
	h := uint64(fsWriteV1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return h
}

// confine restricts this thread (and what it starts) as o says.
func confine(o execOptions) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := landlock(o); err != nil {
		return err
	}
	if !o.network {
		if err := cutNetwork(); err != nil {
			return err
		}
	}
	return nil
}

// landlock restricts this thread: writes only under o.writable (none
// under read-only) and the device files; TCP bind and connect nowhere
// when the network is off (ABI 4 and later); signals and abstract Unix
// sockets only within the sandbox (ABI 6 and later; the sockets only when
// the network is off).
func landlock(o execOptions) error {
	abi := landlockABI()
	if abi < 1 {
		if o.mode.Confines() {
			return fmt.Errorf("this kernel has no Landlock: writes cannot be confined")
		}
		return nil
	}
	var attr unix.LandlockRulesetAttr
	size := unsafe.Sizeof(uint64(0))
	if o.mode.Confines() {
		attr.Access_fs = handledFS(abi)
	}
	if abi >= 4 {
		size = unsafe.Offsetof(attr.Scoped)
		if !o.network {
			attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	if abi >= 6 {
		size = unsafe.Sizeof(attr)
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
		if !o.network {
			attr.Scoped |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
	}
	if attr.Access_fs == 0 && attr.Access_net == 0 && attr.Scoped == 0 {
		return nil
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	if attr.Access_fs != 0 {
		if o.mode == WorkspaceWrite {
			for _, p := range o.writable {
				err := allowBeneath(int(fd), p, attr.Access_fs)
				if err != nil && !errors.Is(err, unix.ENOENT) {
					// A path allowed before it exists (a file the user
					// let zot's tools create) is no rule yet.
					return err
				}
			}
		}
		for _, p := range devices {
			// A device this system lacks is no loss.
			_ = allowBeneath(int(fd), p, deviceWrites)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// allowBeneath grants access to the file or folder at path and what is
// under it.
func allowBeneath(rulesetFD int, path string, access uint64) error {
	f, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s for the sandbox: %w", path, err)
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		// A file takes only the rights of a file.
		access &= unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
			unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(f)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", path, errno)
	}
	return nil
}

// cutNetwork installs a seccomp filter on this thread that fails every
// socket(2) of the IPv4 and IPv6 families (TCP, UDP, ICMP, raw) and
// io_uring_setup(2) (whose rings open sockets without socket(2)) with
// EACCES; Unix sockets and netlink stay.
func cutNetwork() error {
	if seccompArch == 0 {
		return fmt.Errorf("no seccomp filter for %s: the network cannot be cut", runtime.GOARCH)
	}
	const (
		ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		// Offsets in struct seccomp_data.
		offNr   = 0
		offArch = 4
		offArg0 = 16 // args[0], its low half on a little-endian machine
	)
	prog := []unix.SockFilter{
		{Code: ldW, K: offArch},
		{Code: jeq, Jt: 1, K: seccompArch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ldW, K: offNr},
		// x32 system calls on amd64 (a second table): refused whole.
		{Code: jge, Jt: 0, Jf: 1, K: x32Bit},
		{Code: ret, K: deny},
		{Code: jeq, Jt: 0, Jf: 1, K: sysIOUringSetup},
		{Code: ret, K: deny},
		{Code: jeq, Jt: 1, Jf: 0, K: sysSocket},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ldW, K: offArg0},
		{Code: jeq, Jt: 2, Jf: 0, K: unix.AF_INET},
		{Code: jeq, Jt: 1, Jf: 0, K: unix.AF_INET6},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: deny},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	return nil
}

// hardLinks returns the number of names of the file at path; 1 when it
// cannot be known (or it does not exist).
func hardLinks(path string) uint64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return 1
	}
	return uint64(st.Nlink)
}
