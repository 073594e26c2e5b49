package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Limits of the output a command's result shows: the first and the last
// captureBytes / captureLines each.
const (
	captureBytes = 30 << 10
	captureLines = 1000
)

// outputCapture collects a command's output: the head and the tail within
// the limits, the stream's first spillMax bytes in a spill file once it
// outgrows the head, and a copy for live progress. It is safe for
// concurrent writes.
type outputCapture struct {
	newSpill spillFunc
	progress *progressPump // nil: no progress

	mu       sync.Mutex
	head     []byte
	headNL   int
	headFull bool
	tail     []byte // the latest output after the head, at most 2*captureBytes
	total    int64
	totalNL  int64
	spill    *os.File
	spilled  int64 // bytes written to spill
	dropped  int64 // bytes past spillMax, not written to spill
	spillErr error
}

func newOutputCapture(newSpill spillFunc, progress *progressPump) *outputCapture {
	return &outputCapture{newSpill: newSpill, progress: progress}
}

// Write implements io.Writer. It never fails: a spill file problem is
// reported in the summary instead.
func (c *outputCapture) Write(p []byte) (int, error) {
	if c.progress != nil {
		c.progress.write(p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	nl := bytes.Count(p, []byte{'\n'})
	c.totalNL += int64(nl)
	rest := p
	if !c.headFull {
		rest = c.fillHead(p)
	}
	if len(rest) > 0 {
		c.toSpill(rest)
		c.tail = append(c.tail, rest...)
		if len(c.tail) > 2*captureBytes {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-captureBytes:]...)
		}
	}
	return len(p), nil
}

// captureBufSize is the size of the buffers ReadFrom reads a command's
// output with: os/exec's own copy uses the same.
const captureBufSize = 32 << 10

// captureBuffers are ReadFrom's read buffers, reused from one command to
// the next.
var captureBuffers = sync.Pool{New: func() any { return new([captureBufSize]byte) }}

// ReadFrom implements io.ReaderFrom: os/exec copies a command's output
// from its pipe through it, into a buffer reused across commands, instead
// of through a new 32 KiB buffer per command. Like Write, it reports no
// failure of its own; a failed read of r is returned.
func (c *outputCapture) ReadFrom(r io.Reader) (int64, error) {
	buf := captureBuffers.Get().(*[captureBufSize]byte)
	defer captureBuffers.Put(buf)
	var total int64
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			_, _ = c.Write(buf[:n])
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// fillHead moves as much of p into the head as the limits allow and
// returns what is left.
func (c *outputCapture) fillHead(p []byte) []byte {
	cut := min(len(p), captureBytes-len(c.head))
	lines := c.headNL
	for i := 0; i < cut; i++ {
		if p[i] == '\n' {
			lines++
			if lines == captureLines {
				cut = i + 1
				break
			}
		}
	}
	c.head = append(c.head, p[:cut]...)
	c.headNL = lines
	rest := p[cut:]
	if len(c.head) >= captureBytes || c.headNL >= captureLines {
		c.headFull = true
		// Do not end the head inside a UTF-8 sequence; the partial bytes
		// move to what follows.
		complete, partial := splitUTF8(c.head)
		if len(partial) > 0 {
			c.head = complete
			rest = append(append([]byte(nil), partial...), rest...)
		}
	}
	return rest
}

// toSpill writes output that went past the head to the spill file,
// creating it (with the head) on first use, up to spillMax bytes in all.
func (c *outputCapture) toSpill(p []byte) {
	if c.spillErr != nil {
		return
	}
	if c.spill == nil {
		f, err := c.newSpill()
		if err != nil {
			c.spillErr = err
			return
		}
		c.spill = f
		c.writeSpill(c.head)
	}
	c.writeSpill(p)
}

// writeSpill writes what of p fits under spillMax and counts the rest as
// dropped.
func (c *outputCapture) writeSpill(p []byte) {
	room := max(spillMax-c.spilled, 0)
	if int64(len(p)) > room {
		c.dropped += int64(len(p)) - room
		p = p[:room]
	}
	if len(p) == 0 || c.spillErr != nil {
		return
	}
	n, err := c.spill.Write(p)
	c.spilled += int64(n)
	if err != nil {
		c.spillErr = err
	}
}

// finish closes the spill file and renders the captured output: the whole
// output when it fit, else head, a marker naming what was left out and
// where the full output is, and tail. The spill file is removed when
// nothing was left out.
func (c *outputCapture) finish() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := lastLines(c.tail, captureBytes, captureLines)
	omitted := c.total - int64(len(c.head)) - int64(len(tail))
	spillName := ""
	if c.spill != nil {
		spillName = c.spill.Name()
		if err := c.spill.Close(); err != nil && c.spillErr == nil {
			c.spillErr = err
		}
		if omitted == 0 || c.spillErr != nil {
			os.Remove(spillName)
		}
		c.spill = nil
	}
	var sb strings.Builder
	sb.WriteString(strings.ToValidUTF8(string(c.head), "\uFFFD"))
	if omitted > 0 {
		omittedNL := c.totalNL - int64(c.headNL) - int64(bytes.Count(tail, []byte{'\n'}))
		if sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "\n[... %d bytes (%d lines) omitted; ", omitted, omittedNL)
		switch {
		case c.spillErr != nil:
			fmt.Fprintf(&sb, "the full output could not be saved: %v ...]\n\n", c.spillErr)
		case c.dropped > 0:
			fmt.Fprintf(&sb, "the first %d bytes of the output (%d bytes) saved to %s; the %d bytes after them were not saved (the limit is %d MiB) ...]\n\n",
				c.spilled, c.total, spillName, c.dropped, spillMax>>20)
		default:
			fmt.Fprintf(&sb, "full output (%d bytes) saved to %s ...]\n\n", c.total, spillName)
		}
	}
	sb.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return sb.String()
}

// lastLines returns the end of b holding at most maxBytes bytes and
// maxLines lines, starting on a UTF-8 sequence boundary.
func lastLines(b []byte, maxBytes, maxLines int) []byte {
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
	}
	// Count lines from the end; a trailing newline ends the last line.
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	lines := 0
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			lines++
			if lines == maxLines {
				b = b[i+1:]
				break
			}
		}
	}
	for len(b) > 0 && !utf8RuneStart(b[0]) {
		b = b[1:]
	}
	return b
}

func utf8RuneStart(c byte) bool { return c&0xC0 != 0x80 }
