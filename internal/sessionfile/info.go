package sessionfile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Info is what the first line of a session file says about it.
type Info struct {
	// CWD is the working directory recorded when the file was created;
	// empty for files of format 0, which have no header.
	CWD string
	// Created is when the file was created; zero when unknown.
	Created time.Time
}

// maxHeaderLine bounds the header line ReadInfo reads.
const maxHeaderLine = 64 << 10

// ReadInfo reads the header of the session file at path without reading
// its messages, so listing many sessions stays cheap. A file without a
// header (format 0) gives the zero Info.
func ReadInfo(path string) (Info, error) {
	// Checked before opening, so a named pipe in its place cannot hang us.
	st, err := os.Stat(path)
	if err != nil {
		return Info{}, err
	}
	if err := checkRegular(path, st); err != nil {
		return Info{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, maxHeaderLine)).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return Info{}, fmt.Errorf("reading %s: %w", path, err)
	}
	var r record
	if json.Unmarshal(line, &r) != nil || r.Session == nil {
		return Info{}, nil
	}
	return Info{CWD: r.Session.CWD, Created: r.Session.Created}, nil
}
