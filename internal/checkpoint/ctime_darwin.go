package checkpoint

import (
	"os"
	"syscall"
	"time"
)

// changedBefore reports whether the file at path last changed (content or
// metadata: its ctime) well before t.
func changedBefore(path string, t time.Time) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return time.Unix(st.Ctimespec.Unix()).Before(t.Add(-ctimeSlack))
}
