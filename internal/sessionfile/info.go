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
	// Parent is the id of the session this one was forked from; empty
	// when it was not forked.
	Parent string
	// ForkIndex is the position (from 0) in the parent's transcript of
	// the message the session was forked at, -1 when it was not forked;
	// ForkMessage is that message's id (MessageID).
	ForkIndex   int
	ForkMessage string
	// ParentCall is, for a sub-agent's session, the id of the task call
	// of Parent that started it; empty otherwise.
	ParentCall string
	// Owner is the principal the session belongs to; empty for the
	// user whose zot home holds it.
	Owner string
}

// info is what h says about its file.
func (h *header) info() Info {
	in := Info{CWD: h.CWD, Created: h.Created, Parent: h.Parent, ForkIndex: -1, ForkMessage: h.ForkMessage, ParentCall: h.ParentCall, Owner: h.Owner}
	if h.Parent != "" && h.ForkIndex != nil {
		in.ForkIndex = *h.ForkIndex
	}
	return in
}

// maxHeaderLine bounds the header line ReadInfo reads.
const maxHeaderLine = 64 << 10

// ReadInfo reads the header of the session file at path without reading
// its messages, so listing many sessions stays cheap. A file without a
// header (format 0) gives the Info of a session with no directory, no
// creation time and no parent.
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
		return Info{ForkIndex: -1}, nil
	}
	return r.Session.info(), nil
}
