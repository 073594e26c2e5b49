package main

import (
	"bufio"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk/wire"
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the tests.
var zotBin string

func TestMain(m *testing.M) {
	code := zotbin.Main(m, &zotBin, true)
	if leanOnce.dir != "" { // the lean zot leanPair built
		_ = os.RemoveAll(leanOnce.dir)
	}
	os.Exit(code)
}

// hangGuard bounds every wait; it only catches hangs, it times nothing.
const hangGuard = 60 * time.Second

// proc is a running `zot` speaking the wire over pipes.
type proc struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	frames  chan frameIn
	stderr  *zotbin.Buffer
	done    chan struct{}
	lastSeq int64
}

// frameIn is one stdout line and what it decoded to.
type frameIn struct {
	raw  []byte
	resp *wire.Response
	ev   wire.Event
}

// start runs zot with args (and extra environment entries) in dir.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startWith(t, nil, env, args...)
}

// startWith is start with zot's stderr going to stderr when it is not
// nil (proc.stderr then stays empty).
func startWith(t *testing.T, stderr io.Writer, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(zotBin, args...)
	cmd.Env = append(cleanEnv(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, frames: make(chan frameIn, 4096), stderr: &zotbin.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readLoop(stdout)
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-p.done:
		case <-time.After(hangGuard):
			_ = cmd.Process.Kill()
			<-p.done
		}
		_ = cmd.Wait()
		if strings.Contains(p.stderr.String(), "breaks the schema") {
			t.Errorf("the server reported a frame that breaks the schema:\n%s", p.stderr.String())
		}
	})
	return p
}

// cleanEnv is the test process's environment without provider keys,
// the rpc token or OpenTelemetry's settings, so the host cannot change what is tested.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasSuffix(k, "_API_KEY"), k == "ZOTCORE_RPC_TOKEN", k == "ZOT_HOME", strings.HasPrefix(k, "OTEL_"):
			continue
		}
		out = append(out, kv)
	}
	return append(out, "ZOT_VALIDATE=1", "ZOT_HOME="+os.TempDir()+"/zot-conformance-no-home")
}

// readLoop validates every stdout line against the schema as it arrives.
func (p *proc) readLoop(stdout io.Reader) {
	defer close(p.done)
	defer close(p.frames)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		r := frameIn{raw: line}
		if err := schemacheck.ValidateFrame(line); err != nil {
			p.t.Errorf("frame breaks the schema: %v\n%s", err, line)
		}
		resp, ev, err := wire.DecodeFrame(line)
		if err != nil {
			p.t.Errorf("undecodable stdout line: %v\n%q", err, line)
			continue
		}
		r.resp, r.ev = resp, ev
		p.frames <- r
	}
}

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing %q: %v", line, err)
	}
}

// next returns the next frame, checking that event seq only grows.
func (p *proc) next() frameIn {
	p.t.Helper()
	select {
	case r, ok := <-p.frames:
		if !ok {
			p.t.Fatalf("stdout ended early; stderr:\n%s", p.stderr.String())
		}
		if r.ev != nil {
			if s := r.ev.GetSeq(); s <= p.lastSeq {
				p.t.Errorf("seq %d after %d", s, p.lastSeq)
			} else {
				p.lastSeq = s
			}
		}
		return r
	case <-time.After(hangGuard):
		p.t.Fatalf("no frame within %v; stderr:\n%s", hangGuard, p.stderr.String())
	}
	return frameIn{}
}

// response reads frames up to the next response and returns it with the
// events seen before it.
func (p *proc) response() (*wire.Response, []wire.Event) {
	p.t.Helper()
	var evs []wire.Event
	for {
		r := p.next()
		if r.resp != nil {
			return r.resp, evs
		}
		evs = append(evs, r.ev)
	}
}

// untilDone reads events up to and including a done, failing on a
// response in between.
func (p *proc) untilDone() []wire.Event {
	p.t.Helper()
	var evs []wire.Event
	for {
		r := p.next()
		if r.resp != nil {
			p.t.Fatalf("unexpected response while waiting for done: %s", r.raw)
		}
		evs = append(evs, r.ev)
		if _, ok := r.ev.(*wire.DoneEvent); ok {
			return evs
		}
	}
}

// until reads events until one of the given type arrives.
func (p *proc) until(typ string) []wire.Event {
	p.t.Helper()
	var evs []wire.Event
	for {
		r := p.next()
		if r.resp != nil {
			p.t.Fatalf("unexpected response while waiting for %s: %s", typ, r.raw)
		}
		evs = append(evs, r.ev)
		if r.ev.Type() == typ {
			return evs
		}
	}
}

// exit closes stdin and returns the exit status.
func (p *proc) exit() int {
	p.t.Helper()
	_ = p.stdin.Close()
	return p.wait()
}

func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(hangGuard):
		p.t.Fatalf("zot did not exit; stderr:\n%s", p.stderr.String())
	}
	err := p.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil && !strings.Contains(err.Error(), "Wait was already called") {
		p.t.Fatal(err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// types lists the event types in order.
func types(evs []wire.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type()
	}
	return out
}

// without drops the given event types (streaming deltas vary in number).
func without(ts []string, drop ...string) []string {
	var out []string
	for _, t := range ts {
		keep := true
		for _, d := range drop {
			if t == d {
				keep = false
			}
		}
		if keep && (len(out) == 0 || out[len(out)-1] != t || !isDelta(t)) {
			out = append(out, t)
		}
	}
	return out
}

func isDelta(t string) bool {
	return t == "text_delta" || t == "thinking_delta" || t == "tool_use_args" || t == "tool_progress"
}

// script writes a scripted-provider script and returns its path.
func script(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rpcArgs are the flags of an offline `zot rpc` in a fresh directory.
func rpcArgs(t *testing.T, extra ...string) []string {
	return append([]string{"rpc", "--provider", "scripted", "--cwd", t.TempDir()}, extra...)
}

func wantResponse(t *testing.T, r *wire.Response, command string, success bool, code wire.ErrorCode) {
	t.Helper()
	if r.Command != command || r.Success != success || r.Code != code {
		t.Fatalf("response: got command=%q success=%v code=%q error=%q; want %q %v %q", r.Command, r.Success, r.Code, r.Error, command, success, code)
	}
}

// startPiped starts cmd with its stdin and stdout piped and its stderr
// kept in a buffer; it is killed at cleanup unless the test waited for it.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, *zotbin.Buffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(zotbin.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return stdin, stdout, stderr
}

// endOf waits for cmd, a zot whose input has ended, and returns what its
// Wait returned. A zot that does not end within hangGuard is sent
// SIGQUIT, so that its stderr (stderr, given as its Stderr) shows where
// each of its goroutines stands, then killed, and the test fails with
// that stderr: a hang names itself instead of stalling the test run
// until go test's own timeout.
func endOf(t *testing.T, cmd *exec.Cmd, stderr fmt.Stringer) error {
	t.Helper()
	cmd.WaitDelay = 5 * time.Second // a child left holding its stderr does not hold the test
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
	}
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	t.Fatalf("zot %v did not end within %v of the end of its input; its stderr, with its goroutines:\n%s", cmd.Args[1:], hangGuard, stderr)
	return nil
}

// skipUnderRaceBinary skips a memory test when the zot under test was
// built with the race detector, which multiplies what a process holds:
// a ceiling set for the product would measure the detector instead.
func skipUnderRaceBinary(t *testing.T) {
	t.Helper()
	info, err := buildinfo.ReadFile(zotBin)
	if err != nil {
		t.Fatalf("reading the build settings of %s: %v", zotBin, err)
	}
	for _, s := range info.Settings {
		if s.Key == "-race" && s.Value == "true" {
			t.Skip("zot was built with the race detector: its memory is not the product's")
		}
	}
}
