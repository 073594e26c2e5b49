//go:build unix

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// accessWrite is access(2)'s W_OK.
const accessWrite = 0x2

// checkWritable refuses a file the user may not write, as access(2) judges
// it for the real user and group ids.
func checkWritable(path string, st fs.FileInfo) error {
	err := syscall.Access(path, accessWrite)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		uid, gid, _, _ := fileOwner(st)
		return fmt.Errorf("permission denied: the file (owner %d, group %d, mode %v) is not writable by user %d",
			uid, gid, st.Mode().Perm(), os.Getuid())
	}
	return err
}

// fileOwner returns the owner, group and number of hard links of the file
// st describes; ok is false where the platform does not say.
func fileOwner(st fs.FileInfo) (uid, gid int, links uint64, ok bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 1, false
	}
	return int(sys.Uid), int(sys.Gid), uint64(sys.Nlink), true
}
