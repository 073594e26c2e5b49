package sessionfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxFileBytes bounds what is read of a session file. A transcript that
// large no model would take whole; the bound keeps a wrong path (a
// device, a file that never ends) from taking all memory.
const maxFileBytes = 1 << 30

// readContents reads and parses the session file at path a line at a
// time, never holding the whole file: a long session costs its
// transcript, not its transcript and its file. It refuses anything but a
// regular file, without blocking on it (a named pipe is opened with
// O_NONBLOCK where the platform has it), and a file of more than
// maxFileBytes, counting the bytes actually read as well as the size the
// file states.
func readContents(path string) (contents, error) {
	st, err := os.Stat(path)
	if err != nil {
		return contents{}, err
	}
	if err := checkRegular(path, st); err != nil {
		return contents{}, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return contents{}, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return contents{}, err
	}
	if err := checkRegular(path, st); err != nil {
		return contents{}, err
	}
	c, err := parseReader(path, io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return contents{}, err
	}
	if c.size > maxFileBytes {
		return contents{}, tooBig(path)
	}
	return c, nil
}

// checkRegular refuses a file that is not regular or is too big.
func checkRegular(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("session file %s is not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > maxFileBytes {
		return tooBig(path)
	}
	return nil
}

func tooBig(path string) error {
	return fmt.Errorf("session file %s is larger than %d MiB", path, maxFileBytes>>20)
}
