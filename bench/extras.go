package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"zot.dev/zot/bench/fakeprovider"
)

// sleepCommand is what bash runs while the abort of AbortSleep is timed.
const sleepCommand = fakeprovider.SleepCommand

// hugeFile is the size of the sparse file read runs on while the abort of
// AbortRead is timed. Past a little text it is a hole: it takes no disk,
// reads as NUL bytes at memory speed and holds no newline, so read scans
// it up to its own bound of 1 GiB looking for the end of line 1.
const (
	hugeFile = 2 << 30
	hugeText = 16 << 10 // text at its start, so it is not taken for binary
)

// makeHugeFile creates the file of AbortRead in dir.
func makeHugeFile(dir string) (string, error) {
	path := filepath.Join(dir, "huge.txt")
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("creating the file to read: %w", err)
	}
	_, err = f.WriteString(strings.Repeat("a", hugeText))
	if err == nil {
		err = f.Truncate(hugeFile)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing the file to read: %w", err)
	}
	return path, nil
}

// extraSection measures the section on abort and large input with the
// first provider, round the binaries that are not the floor, and adds it
// to report.
func (h *harness) extraSection(ctx context.Context, report *Report) error {
	huge, err := makeHugeFile(h.dir)
	if err != nil {
		return err
	}
	defer os.Remove(huge)
	p := h.cfg.Providers[0]
	cols := make([]column, len(report.Binaries))
	for rep := range h.cfg.Reps {
		var status []string
		for i, b := range report.Binaries {
			if b.Floor {
				continue
			}
			h.extras(ctx, b, p, huge, &cols[i])
			if err := ctx.Err(); err != nil {
				return err
			}
			status = append(status, b.Name+" "+cols[i].status())
		}
		h.logf("abort and large input rep %d/%d: %s", rep+1, h.cfg.Reps, strings.Join(status, ", "))
	}
	s := section(p, ExtraMetrics(), cols)
	report.Extra = &s
	return nil
}

// extras runs one repetition of the section for binary b: one process
// whose prompts are aborted mid-tool, then one that takes the big prompt.
func (h *harness) extras(ctx context.Context, b Binary, p, huge string, col *column) {
	failAll := func(ms []Metric, err error) {
		for _, m := range ms {
			col.fail(m, err)
		}
	}
	aborts := []Metric{AbortSleep, AbortRead}
	if c, err := h.started(ctx, b, p); err != nil {
		failAll(aborts, err)
	} else {
		prompts := map[Metric]string{AbortSleep: fakeprovider.PromptSleep, AbortRead: fakeprovider.PromptRead(huge)}
		for i, m := range aborts {
			d, err := c.abortTool(prompts[m], h.cfg.AbortAfter)
			if err != nil {
				// The process may be in any state now: the metrics left
				// fail with it.
				failAll(aborts[i:], c.fail(err))
				break
			}
			col.add(m, ms(d))
		}
		if !c.reaped {
			if err := c.reap(h.cfg.Timeout); err != nil {
				failAll(aborts, fmt.Errorf("after stdin closed: %w", err))
			}
		}
	}
	c, err := h.started(ctx, b, p)
	if err != nil {
		col.fail(BigPromptRSS, err)
		return
	}
	if err := h.bigPrompt(c); err != nil {
		col.fail(BigPromptRSS, c.fail(err))
		return
	}
	rss, rssErr := readPeakRSS(c.pid())
	if err := c.reap(h.cfg.Timeout); err != nil {
		col.fail(BigPromptRSS, fmt.Errorf("after stdin closed: %w", err))
		return
	}
	if rssErr != nil {
		rss = exitMaxRSS(c.cmd.ProcessState)
	}
	if rss == 0 {
		col.fail(BigPromptRSS, errors.New("peak RSS is not readable here"))
		return
	}
	col.add(BigPromptRSS, float64(rss)/(1<<20))
}

// started spawns b with provider p and waits for its ping.
func (h *harness) started(ctx context.Context, b Binary, p string) (*child, error) {
	c, err := spawn(ctx, resolve(b.Path), h.args(p), h.fx.cwd, h.env, h.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if err := c.ping(); err != nil {
		return nil, c.fail(fmt.Errorf("ping: %w", err))
	}
	return c, nil
}

// abortTool sends a prompt whose answer calls a tool that runs long,
// waits until the tool has run for after, aborts, and returns the time
// from writing the abort to reading the prompt's done. The prompt must
// end as the protocol says an abort ends it: the abort answered with
// aborted true, the tool's result an error saying it was aborted, and a
// last turn_end with stop "aborted".
func (c *child) abortTool(message string, after time.Duration) (time.Duration, error) {
	if err := c.arm(); err != nil {
		return 0, err
	}
	id, err := c.send("prompt", message)
	if err != nil {
		return 0, err
	}
	// The tools run once the step that called them has ended.
	for running := false; !running; {
		f, err := c.next()
		if err != nil {
			return 0, fmt.Errorf("waiting for the tool to start: %w", err)
		}
		switch {
		case f.isResponse(id) && (f.Success == nil || !*f.Success):
			return 0, fmt.Errorf("prompt refused: %s", f.failure())
		case f.Type == "error":
			return 0, fmt.Errorf("error event: %s", f.failure())
		case f.Type == "done":
			return 0, errors.New("the prompt ended before its tool ran")
		case f.Type == "turn_end":
			if f.Stop != "tool_use" {
				return 0, fmt.Errorf("the step ended with stop %q, not tool_use", f.Stop)
			}
			running = true
		}
	}
	time.Sleep(after)
	if err := c.arm(); err != nil {
		return 0, err
	}
	start := time.Now()
	abortID, err := c.send("abort", "")
	if err != nil {
		return 0, err
	}
	var answer, stop, result string
	for {
		f, err := c.next()
		if err != nil {
			return 0, fmt.Errorf("waiting for the aborted prompt's done: %w", err)
		}
		switch f.Type {
		case "response":
			if f.isResponse(abortID) {
				answer = string(f.Data)
			}
		case "tool_result":
			result = resultText(f)
		case "turn_end":
			stop = f.Stop
		case "done":
			elapsed := time.Since(start)
			switch {
			case answer == "":
				return 0, errors.New("the prompt's done came before the abort's answer")
			case !strings.Contains(answer, `"aborted":true`):
				return 0, fmt.Errorf("abort answered %s", answer)
			case !strings.Contains(result, "aborted") || strings.HasPrefix(result, notError):
				return 0, fmt.Errorf("the tool finished before the abort, or was not stopped by it: its result is %.120q", result)
			case stop != "aborted":
				return 0, fmt.Errorf("the aborted prompt's last turn_end has stop %q", stop)
			}
			return elapsed, nil
		}
	}
}

// notError starts what resultText returns for a result that is not an
// error.
const notError = "not an error: "

// resultText returns the text of a tool_result frame, after notError
// when it is not an error.
func resultText(f frame) string {
	var blocks []struct {
		Type, Text string
	}
	_ = json.Unmarshal(f.Content, &blocks)
	var sb strings.Builder
	for _, b := range blocks {
		sb.WriteString(b.Text)
	}
	if !f.IsError {
		return notError + sb.String()
	}
	return sb.String()
}

// bigPrompt sends one prompt line of exactly cfg.BigPrompt bytes (its
// newline not counted) and reads its events up to its done; the fake
// provider must have been sent at least the prompt's text.
func (h *harness) bigPrompt(c *child) error {
	if err := c.arm(); err != nil {
		return err
	}
	before := h.fake.Stats().BodyBytes
	id, text, err := c.writeBigPrompt(h.cfg.BigPrompt)
	if err != nil {
		return err
	}
	for {
		f, err := c.next()
		if err != nil {
			return fmt.Errorf("reading the prompt's events: %w", err)
		}
		switch {
		case f.isResponse(id) && (f.Success == nil || !*f.Success):
			return fmt.Errorf("prompt refused: %s", f.failure())
		case f.Type == "error":
			return fmt.Errorf("error event: %s", f.failure())
		case f.Type == "done":
			if sent := h.fake.Stats().BodyBytes - before; sent < int64(text) {
				return fmt.Errorf("the provider was sent %d bytes for a prompt of %d", sent, text)
			}
			return nil
		}
	}
}

// writeBigPrompt writes one prompt line of size bytes and returns its id
// and the length of its text.
func (c *child) writeBigPrompt(size int) (id string, text int, err error) {
	id = c.nextID()
	head := `{"id":"` + id + `","type":"prompt","message":"`
	const tail = `"}`
	text = size - len(head) - len(tail)
	if text < len(fakeprovider.PromptShort) {
		return "", 0, fmt.Errorf("a prompt line of %d bytes cannot hold the command", size)
	}
	line := make([]byte, 0, size+1)
	line = append(line, head+fakeprovider.PromptShort...)
	for range text - len(fakeprovider.PromptShort) {
		line = append(line, 'a')
	}
	line = append(line, tail+"\n"...)
	if err := c.write(line); err != nil {
		return "", 0, fmt.Errorf("writing the prompt: %w", err)
	}
	return id, text, nil
}
