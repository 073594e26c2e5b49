package mcphost

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// jsonLines passes on the lines of a stdio server's stdout that can be
// JSON-RPC messages (their first character other than white space is {
// or [) and skips the others, writing each skipped line (its first
// skippedShown bytes) to skipped. Servers print banners and stray log
// lines on stdout; the MCP SDKs other agents use skip such lines, while
// the Go SDK's decoder would fail the start or break the connection.
type jsonLines struct {
	r       *bufio.Reader
	src     io.Closer
	skipped io.Writer

	pending  []byte // passed-on bytes Read has not handed out yet
	buf      []byte // backing store of pending
	mid      bool   // inside a line being passed on
	dropping bool   // inside a line being skipped
	dropped  []byte // the start of the line being skipped
	err      error  // the source's error, handed out once pending is empty
}

// skippedShown bounds what is written of one skipped line.
const skippedShown = 200

func newJSONLines(src io.ReadCloser, skipped io.Writer) *jsonLines {
	return &jsonLines{r: bufio.NewReaderSize(src, 64<<10), src: src, skipped: skipped}
}

// Read implements io.Reader.
func (j *jsonLines) Read(p []byte) (int, error) {
	for {
		if len(j.pending) > 0 {
			n := copy(p, j.pending)
			j.pending = j.pending[n:]
			return n, nil
		}
		if j.err != nil {
			return 0, j.err
		}
		chunk, err := j.r.ReadSlice('\n')
		whole := err == nil // the chunk ends its line
		if err != nil && err != bufio.ErrBufferFull {
			j.err = err
		}
		if len(chunk) == 0 {
			continue
		}
		if !j.mid && !j.dropping {
			if rest := bytes.TrimLeft(chunk, " \t\r\n"); len(rest) > 0 && rest[0] != '{' && rest[0] != '[' {
				j.dropping = true
				j.dropped = j.dropped[:0]
			}
		}
		if j.dropping {
			if room := skippedShown - len(j.dropped); room > 0 {
				j.dropped = append(j.dropped, chunk[:min(room, len(chunk))]...)
			}
			if whole || j.err != nil {
				j.dropping = false
				fmt.Fprintf(j.skipped, "zot: skipped a line of stdout that is not JSON-RPC: %s\n", bytes.TrimSpace(j.dropped))
			}
			continue
		}
		j.buf = append(j.buf[:0], chunk...)
		j.pending = j.buf
		// A line of white space alone does not start a message.
		j.mid = !whole && len(bytes.TrimLeft(chunk, " \t\r\n")) > 0
	}
}

// Close implements io.Closer: it closes the source.
func (j *jsonLines) Close() error { return j.src.Close() }
