package session

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

// readFile reads the session file at path. It refuses anything but a
// regular file, without blocking on it (a named pipe is opened with
// O_NONBLOCK where the platform has it), and a file of more than
// maxFileBytes, counting the bytes actually read as well as the size the
// file states.
func readFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	// Read into a buffer of the size the file states (and one byte to
	// see its end), not one grown by doubling: a big session is not
	// copied over and over as it is read.
	data := make([]byte, 0, min(st.Size(), maxFileBytes)+1)
	r := io.LimitReader(f, maxFileBytes+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: room as append makes it
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(data) > maxFileBytes {
		return nil, tooBig(path)
	}
	return data, nil
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
