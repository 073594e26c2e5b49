//go:build !unix

package tools

import (
	"errors"
	"io/fs"
)

// checkWritable refuses a read-only file.
func checkWritable(path string, st fs.FileInfo) error {
	if st.Mode().Perm()&0o200 == 0 {
		return errors.New("permission denied: the file is read-only")
	}
	return nil
}

// fileOwner reports that owners and link counts are unknown here.
func fileOwner(st fs.FileInfo) (uid, gid int, links uint64, ok bool) {
	return 0, 0, 1, false
}
