package rpcclient

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// tailBytes bounds how much of zot's stderr the client keeps to explain
// an exit.
const tailBytes = 4 << 10

// stderrTail passes zot's stderr on to the caller's writer (when there is
// one) and keeps its last bytes, so that an early exit can say why: zot
// writes the reason for a failed start (a missing key, a bad flag) there.
type stderrTail struct {
	to io.Writer // nil discards

	mu  sync.Mutex
	buf []byte
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	t.mu.Unlock()
	if t.to != nil {
		return t.to.Write(p)
	}
	return len(p), nil
}

// reason returns the last lines zot wrote to stderr, joined into one line,
// or "" when it wrote nothing.
func (t *stderrTail) reason() string {
	t.mu.Lock()
	b := t.buf
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:] // start at a whole line
		}
	}
	text := string(b)
	t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	const keep = 5
	if len(lines) > keep {
		lines = lines[len(lines)-keep:]
	}
	return strings.Join(lines, " | ")
}
