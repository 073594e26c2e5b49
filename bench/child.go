package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"zot.dev/zot/internal/jsonscan"
)

// maxFrame bounds one line a child writes; zot echoes a prompt of up to
// maxBigPrompt in its user_message event.
const maxFrame = 2*maxBigPrompt + 1<<20

// stderrTail is how much of a child's stderr is kept for error messages.
const stderrTail = 2048

// child is one running binary under test, driven over its stdin and stdout.
// Reads and writes carry deadlines, so a child that stops answering costs a
// timeout, never a hang. A child is used by one goroutine.
type child struct {
	cmd     *exec.Cmd
	in      *os.File // write end of the child's stdin
	out     *os.File // read end of the child's stdout
	errPipe *os.File // read end of the child's stderr
	r       *bufio.Reader
	ctx     context.Context
	timeout time.Duration
	ids     int

	stderr     tail
	stderrDone chan struct{} // closed when the stderr reader ends
	stopAfter  func() bool   // unregisters the context's deadline hook
	waitErr    error
	reaped     bool
}

// spawn starts path with args in dir. The returned child must be reaped.
func spawn(ctx context.Context, path string, args []string, dir string, env []string, timeout time.Duration) (*child, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("creating stderr pipe: %w", err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	closeAll(inR, outW, errW) // the child holds its own copies
	c := &child{
		cmd: cmd, in: inW, out: outR, errPipe: errR,
		r:   bufio.NewReaderSize(outR, 256<<10),
		ctx: ctx, timeout: timeout,
		stderrDone: make(chan struct{}),
	}
	go func() {
		defer close(c.stderrDone)
		_, _ = io.Copy(&c.stderr, errR)
	}()
	// Cancelling ctx cuts any read or write in progress.
	c.stopAfter = context.AfterFunc(ctx, func() {
		past := time.Unix(1, 0)
		_ = c.out.SetReadDeadline(past)
		_ = c.in.SetWriteDeadline(past)
	})
	return c, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// arm starts the time limit of one operation.
func (c *child) arm() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	end := time.Now().Add(c.timeout)
	if err := c.out.SetReadDeadline(end); err != nil {
		return fmt.Errorf("setting read deadline: %w", err)
	}
	if err := c.in.SetWriteDeadline(end); err != nil {
		return fmt.Errorf("setting write deadline: %w", err)
	}
	// The context may have ended between the check and the deadlines.
	return c.ctx.Err()
}

// command is a client command.
type command struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Message string `json:"message,omitempty"`
}

// send writes one command and returns its id.
func (c *child) send(typ, message string) (string, error) {
	id := c.nextID()
	line, err := json.Marshal(command{ID: id, Type: typ, Message: message})
	if err != nil {
		return "", fmt.Errorf("encoding %s command: %w", typ, err)
	}
	if err := c.write(append(line, '\n')); err != nil {
		return "", fmt.Errorf("writing %s command: %w", typ, err)
	}
	return id, nil
}

// nextID returns a fresh command id.
func (c *child) nextID() string {
	c.ids++
	return "b" + strconv.Itoa(c.ids)
}

// write writes one or more whole lines to the child's stdin.
func (c *child) write(lines []byte) error {
	if _, err := c.in.Write(lines); err != nil {
		return c.explain(err)
	}
	return nil
}

// frame is the part of a line from the child that the harness reads.
type frame struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id"`
	Command string          `json:"command"`
	Success *bool           `json:"success"`
	Error   json.RawMessage `json:"error"`
	Message json.RawMessage `json:"message"`
	Delta   string          `json:"delta"`
	Stop    string          `json:"stop"`
	Data    json.RawMessage `json:"data"`
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// isResponse reports whether f answers the command with id.
func (f *frame) isResponse(id string) bool {
	if f.Type != "response" {
		return false
	}
	var got string
	return json.Unmarshal(f.ID, &got) == nil && got == id
}

// failure describes a frame's error text, whichever field carries it.
func (f *frame) failure() string {
	for _, raw := range []json.RawMessage{f.Error, f.Message} {
		if len(raw) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	return "no error text"
}

// readTypes lists the frame types whose fields the harness reads; other lines
// are only checked for a type, like a client that handles the events it
// needs and passes over the rest.
var readTypes = map[string]bool{
	"response": true, "text_delta": true, "tool_call": true, "tool_result": true,
	"error": true, "turn_end": true, "done": true,
}

// next reads the next line and decodes what the harness reads of it.
func (c *child) next() (frame, error) {
	line, err := c.readLine()
	if err != nil {
		return frame{}, err
	}
	typ, err := frameType(line)
	if err != nil {
		return frame{}, fmt.Errorf("stdout line %v: %.200q", err, line)
	}
	if !readTypes[typ] {
		return frame{Type: typ}, nil
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		// A field of another type than the harness expects is not the
		// harness's business; the fields it reads are filled anyway.
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return frame{}, fmt.Errorf("stdout line is not JSON (%v): %.200q", err, line)
		}
	}
	return f, nil
}

// frameType returns the type member of a line.
func frameType(line []byte) (string, error) {
	raw, err := jsonscan.Member(line, "type")
	if err != nil {
		return "", errors.New("is not JSON (not an object)")
	}
	var typ string
	if raw == nil || json.Unmarshal(raw, &typ) != nil || typ == "" {
		return "", errors.New("has no type")
	}
	return typ, nil
}

// readLine returns the next non-empty line without its newline; the slice
// is valid until the next read.
func (c *child) readLine() ([]byte, error) {
	for {
		line, err := c.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if len(long) > maxFrame {
					return nil, fmt.Errorf("stdout line longer than %d bytes", maxFrame)
				}
				line, err = c.r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("stdout ended inside a line: %.200q", line)
			}
			return nil, fmt.Errorf("reading stdout: %w", c.explain(err))
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			return line, nil
		}
	}
}

// explain turns a pipe error into what it means for the benchmark.
func (c *child) explain(err error) error {
	switch {
	case c.ctx.Err() != nil:
		return c.ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("no answer within %v", c.timeout)
	case errors.Is(err, io.EOF):
		return errors.New("the process closed stdout")
	case errors.Is(err, syscall.EPIPE):
		return errors.New("the process closed stdin")
	}
	return err
}

// ping sends a ping and waits for its response.
func (c *child) ping() error {
	if err := c.arm(); err != nil {
		return err
	}
	id, err := c.send("ping", "")
	if err != nil {
		return err
	}
	for {
		f, err := c.next()
		if err != nil {
			return fmt.Errorf("waiting for the ping response: %w", err)
		}
		if !f.isResponse(id) {
			continue
		}
		if f.Success == nil || !*f.Success {
			return fmt.Errorf("ping refused: %s", f.failure())
		}
		return nil
	}
}

// reap ends the child: it closes stdin, waits up to grace for the child to
// exit, then kills its process group; a grace of zero kills at once. It
// returns the exit status error.
func (c *child) reap(grace time.Duration) error {
	if c.reaped {
		return c.waitErr
	}
	c.reaped = true
	c.stopAfter()
	_ = c.in.Close()
	if grace <= 0 {
		// Kill before waiting: the process is not reaped yet, so its id
		// and its group's id still name what this harness started.
		killGroup(c.cmd)
		c.waitErr = c.cmd.Wait()
	} else {
		c.waitErr = waitOrKill(c.cmd, grace)
	}
	_ = c.out.Close()
	// A grandchild may still hold stderr open; stop reading it after a while.
	select {
	case <-c.stderrDone:
	case <-time.After(time.Second):
		_ = c.errPipe.Close()
		<-c.stderrDone
	}
	_ = c.errPipe.Close()
	return c.waitErr
}

// fail reaps a child that went wrong at once and adds to err what the
// child's exit and stderr say.
func (c *child) fail(err error) error {
	exitErr := c.reap(0)
	msg := err.Error()
	if exitErr != nil {
		msg += " (" + exitErr.Error() + ")"
	}
	if s := c.stderr.String(); s != "" {
		msg += "; stderr: " + s
	}
	return errors.New(msg)
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept bytes, trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// waitOrKill waits up to grace for cmd to exit, then kills its group and
// waits for it.
func waitOrKill(cmd *exec.Cmd, grace time.Duration) error {
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-waited:
		return err
	case <-timer.C:
		killGroup(cmd)
		if err := <-waited; err != nil {
			return fmt.Errorf("killed %v after stdin closed: %w", grace, err)
		}
		return fmt.Errorf("killed %v after stdin closed", grace)
	}
}
