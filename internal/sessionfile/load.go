package sessionfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"zot.dev/zot/internal/llm"
)

// version is the format this package writes. Files without a header are
// of version 0: no header, and reset lines where the transcript was
// rewritten.
const version = 1

// header is the first line of a session file.
type header struct {
	Version int       `json:"version"`
	CWD     string    `json:"cwd,omitempty"`
	Created time.Time `json:"created,omitzero"`
	// Parent, ForkIndex and ForkMessage say where a forked session came
	// from (see Options).
	Parent      string `json:"parent_id,omitempty"`
	ForkIndex   *int   `json:"fork_index,omitempty"`
	ForkMessage string `json:"fork_message_id,omitempty"`
	// ParentCall is, for a sub-agent's session, the parent's task call
	// that started it (see Options).
	ParentCall string `json:"parent_call_id,omitempty"`
	// Owner is the principal the session belongs to (see Options).
	Owner string `json:"owner,omitempty"`
}

func newHeader(opt Options) header {
	h := header{Version: version, CWD: opt.CWD, Created: time.Now().UTC().Truncate(time.Second), Owner: opt.Owner}
	switch {
	case opt.Parent != "" && opt.ParentCall != "":
		h.Parent, h.ParentCall = opt.Parent, opt.ParentCall
	case opt.Parent != "":
		h.Parent, h.ForkMessage = opt.Parent, opt.ForkMessage
		i := opt.ForkIndex
		h.ForkIndex = &i
	}
	return h
}

// line is h as a line of the file.
func (h header) line() []byte {
	b, err := json.Marshal(record{Session: &h})
	if err != nil {
		panic(err) // a struct of plain fields always encodes
	}
	return append(b, '\n')
}

// contents is what parse makes of a session file.
type contents struct {
	hdr  *header // nil when the file has none
	msgs []llm.Message
	// lines holds the line of the file of each message of msgs, from 1.
	lines []int
	// end is the length of the file without its torn last line.
	end int
	// endsLine reports whether the file's first end bytes end with a
	// newline.
	endsLine bool
	// size is how many bytes were read: the file's length.
	size int
}

// parse reads the lines of a session file held in data (see
// parseReader).
func parse(path string, data []byte) (contents, error) {
	return parseReader(path, bytes.NewReader(data))
}

// parseReader reads the lines of a session file from r, one at a time.
// A last line that does not decode is torn (its write never finished)
// and left out of end; any other line that does not decode is an error.
func parseReader(path string, r io.Reader) (contents, error) {
	var c contents
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, put together
	for n := 1; ; n++ {
		line, err := readLine(br, &long)
		if err != nil && err != io.EOF {
			return contents{}, fmt.Errorf("reading %s: %w", path, err)
		}
		if len(line) == 0 {
			break // the end: every line before had its newline
		}
		complete := line[len(line)-1] == '\n'
		if complete {
			line = line[:len(line)-1]
		}
		c.size += len(line)
		if complete {
			c.size++
		}
		next := c.size
		if len(bytes.TrimSpace(line)) == 0 {
			if complete {
				c.end, c.endsLine = next, true
			}
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			if !complete {
				break // a torn last line: the write it belonged to never finished
			}
			return contents{}, &CorruptError{Path: path, Line: n, Err: err}
		}
		c.end, c.endsLine = next, complete
		switch {
		case r.Session != nil:
			if r.Session.Version > version {
				return contents{}, fmt.Errorf("%s: written by a newer zot (session format %d; this one reads up to %d)", path, r.Session.Version, version)
			}
			if c.hdr == nil {
				c.hdr = r.Session
			}
		case r.Reset:
			c.msgs, c.lines = nil, nil
		default:
			content, err := decodeBlocks(r.Content)
			if err != nil {
				return contents{}, &CorruptError{Path: path, Line: n, Err: err}
			}
			c.msgs = append(c.msgs, llm.Message{Role: llm.Role(r.Role), Content: content, Time: r.Time, Meta: r.Meta})
			c.lines = append(c.lines, n)
		}
		if !complete {
			break
		}
	}
	return c, nil
}

// readLine returns br's next line with its newline (without one at the
// end of the input). A line longer than br's buffer is put together in
// *long, which is kept for the next; a shorter one is br's own bytes,
// good until the next read. Decoding copies what it keeps.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for {
		line, err = br.ReadSlice('\n')
		*long = append(*long, line...)
		if err != bufio.ErrBufferFull {
			return *long, err
		}
	}
}

// ErrCorrupt is matched (errors.Is) by the error of a session file that
// is damaged: a line in its middle does not decode, or its messages do
// not hold together. The file is left as it is.
var ErrCorrupt = errors.New("the session file is damaged")

// CorruptError says where a session file is damaged. It matches
// ErrCorrupt.
type CorruptError struct {
	Path string
	Line int // from 1; 0 when no one line is at fault
	Err  error
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

// Unwrap returns the reason.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// danglingText is the result given to a tool call whose result never
// reached the file.
const danglingText = "aborted: the session ended before the result of this call was saved; it may or may not have run"

// answerDangling returns msgs, and when they end with an assistant
// message whose tool calls have no results (the file was cut between the
// two), a tool message answering each call with an error, as an aborted
// prompt does.
func answerDangling(msgs []llm.Message) []llm.Message {
	if len(msgs) == 0 {
		return msgs
	}
	last := msgs[len(msgs)-1]
	calls := last.ToolCalls()
	if last.Role != llm.RoleAssistant || len(calls) == 0 {
		return msgs
	}
	results := make([]llm.Block, 0, len(calls))
	for _, c := range calls {
		results = append(results, &llm.ToolResultBlock{CallID: c.ID, Name: c.Name, IsError: true, Content: []llm.Block{&llm.TextBlock{Text: danglingText}}})
	}
	return append(msgs[:len(msgs):len(msgs)], llm.Message{Role: llm.RoleTool, Time: last.Time, Content: results})
}
