//go:build unix

package trust

import (
	"os"
	"syscall"
)

// otherOwner returns the uid that owns fi when it is neither this
// process's user nor root.
func otherOwner(fi os.FileInfo) (uid int, other bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	uid = int(st.Uid)
	return uid, uid != 0 && uid != os.Geteuid()
}
