//go:build linux

package soak

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

// markVar is the environment variable every zot the soak starts carries,
// with a value of its own. The tools zot runs inherit it, so a process
// that outlives its zot is found in /proc by it.
const markVar = "ZOT_SOAK_MARK"

// frameIn is one line read from a process's stdout, checked and decoded.
type frameIn struct {
	resp *wire.Response
	ev   wire.Event
	err  error // the line broke the schema or did not decode
	raw  []byte
}

// proc is one running `zot rpc`.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan frameIn // closed when stdout ends
	// endErr is why stdout ended, read once frames is closed.
	endErr error
	// ended is set by the reader of frames that found it closed.
	ended   bool
	stderr  *stderrWatch
	mark    string
	started bool
}

// start runs zot rpc on the scripted provider in dir, with script.
func start(zot, dir, script, mark string, maxLine int) (*proc, error) {
	cmd := exec.Command(zot, "rpc", "--provider", "scripted", "--script", script, "--cwd", dir,
		"--max-line-bytes", strconv.Itoa(maxLine))
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), markVar+"="+mark, "ZOT_VALIDATE=1", "ZOT_HOME="+filepath.Join(dir, ".zot-home"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, stdin: stdin, frames: make(chan frameIn, 1024), stderr: &stderrWatch{}, mark: mark}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", zot, err)
	}
	p.started = true
	go p.read(stdout)
	return p, nil
}

// cleanEnv is the soak's environment without what would change zot's
// behaviour: provider keys, the rpc token, the zot home.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasSuffix(k, "_API_KEY"), k == "ZOTCORE_RPC_TOKEN", k == "ZOT_HOME", k == "ZOT_VALIDATE", k == markVar:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// read checks and decodes every stdout line, in order, until stdout ends.
func (p *proc) read(stdout io.Reader) {
	defer close(p.frames)
	br := bufio.NewReaderSize(stdout, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			switch {
			case len(line) > 0:
				p.endErr = fmt.Errorf("stdout ended inside a line: %.200q", line)
			case !errors.Is(err, io.EOF):
				p.endErr = err
			}
			return
		}
		line = line[:len(line)-1]
		f := frameIn{raw: line}
		if err := schemacheck.ValidateFrame(line); err != nil {
			f.err = fmt.Errorf("frame breaks the schema: %w", err)
		} else if f.resp, f.ev, err = wire.DecodeFrame(line); err != nil {
			f.err = fmt.Errorf("frame does not decode: %w", err)
		}
		p.frames <- f
	}
}

// send writes lines to stdin in one write.
func (p *proc) send(lines ...string) error {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(p.stdin, b.String()); err != nil {
		return fmt.Errorf("writing to zot: %w", err)
	}
	return nil
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// stderrWatch keeps the tail of a process's stderr and counts the frames
// zot itself reported as breaking the schema (ZOT_VALIDATE=1).
type stderrWatch struct {
	mu     sync.Mutex
	tail   []byte
	broken int
	carry  []byte // an unfinished line
}

const stderrKeep = 4096

func (w *stderrWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.carry = append(w.carry, b...)
	for {
		i := bytes.IndexByte(w.carry, '\n')
		if i < 0 {
			break
		}
		if bytes.Contains(w.carry[:i], []byte("breaks the schema")) {
			w.broken++
		}
		w.carry = w.carry[i+1:]
	}
	if len(w.carry) > stderrKeep {
		w.carry = w.carry[len(w.carry)-stderrKeep:]
	}
	w.tail = append(w.tail, b...)
	if over := len(w.tail) - stderrKeep; over > 0 {
		w.tail = append(w.tail[:0], w.tail[over:]...)
	}
	return len(b), nil
}

// String returns the kept tail.
func (w *stderrWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(bytes.TrimSpace(w.tail))
}

// brokenFrames returns how many frames zot reported as breaking the schema.
func (w *stderrWatch) brokenFrames() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// marked lists the processes whose environment holds markVar=mark, or,
// with prefix, a value starting with mark; pid except is left out.
func marked(mark string, prefix bool, except int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(markVar + "=" + mark)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue // gone, or not ours to read
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if prefix && bytes.HasPrefix(kv, want) || bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// describe names the processes pids for a failure message.
func describe(pids []int) string {
	var parts []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		parts = append(parts, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
	}
	return strings.Join(parts, ", ")
}

// fdCount counts the open file descriptors of pid.
func fdCount(pid int) (int, error) {
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0, err
	}
	return len(entries), nil
}

// rss returns the resident set size of pid in bytes (VmRSS).
func rss(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return parseStatusKB(b, "VmRSS:")
}

// parseStatusKB returns the value of a "Name:   N kB" line of
// /proc/PID/status in bytes.
func parseStatusKB(status []byte, name string) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte(name))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", name, line)
		}
		kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s: %w", name, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no %s line", name)
}
