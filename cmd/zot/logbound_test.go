package main

// Children that flood (an extension printing garbage or notices without
// end, an MCP server printing non-JSON lines) cost zot a bounded share
// of a core and a bounded amount of stderr and disk: what each test
// measured is logged (go test -v) for docs/reliability.md.

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// floodWindow is how long each flood is measured; the bounds below are
// generous ceilings for it.
const floodWindow = 2 * time.Second

// Ceilings over floodWindow. Before the bounds, the same floods wrote
// hundreds of MB to stderr and the logs and held a core.
const (
	maxStderrGrowth = 64 << 10
	maxLogGrowth    = 20 << 20 // two files of boundlog.FileCap and a little
	maxNoteGrowth   = 1 << 20  // a log that gets only zot's notes
	maxCPUShare     = 0.5      // of one core; the race detector's build included
)

// sized is a stderr whose growth is measured.
type sized interface {
	size() int64
	String() string
}

// tailBuffer counts what is written to it and keeps the first and last
// 64 KiB: a flood before the bounds must not fill the test's memory.
type tailBuffer struct {
	mu          sync.Mutex
	n           int64
	head, tail_ []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(len(p))
	if room := 64<<10 - len(b.head); room > 0 {
		b.head = append(b.head, p[:min(room, len(p))]...)
	}
	b.tail_ = append(b.tail_, p...)
	if over := len(b.tail_) - 64<<10; over > 0 {
		b.tail_ = append(b.tail_[:0], b.tail_[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) size() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n <= int64(len(b.head)) {
		return string(b.head)
	}
	return string(b.head) + "\n[…]\n" + string(b.tail_)
}

// cpuTime is the CPU time (user and system) process pid has used.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// dirSize is the size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// flood measures, over floodWindow, how much zot (pid) wrote to stderr
// and to logs, and its share of a core, and fails past the ceilings.
func flood(t *testing.T, what string, pid int, stderr sized, logs string, maxLog int64) {
	t.Helper()
	err0, log0, cpu0, t0 := stderr.size(), dirSize(logs), cpuTime(t, pid), time.Now()
	time.Sleep(floodWindow)
	errN, logN, cpuN, wall := stderr.size()-err0, dirSize(logs)-log0, cpuTime(t, pid)-cpu0, time.Since(t0)
	share := cpuN.Seconds() / wall.Seconds()
	t.Logf("%s over %v: stderr +%d bytes, logs +%d bytes (%d in all), zot's CPU %.0f%% of a core",
		what, wall.Round(time.Millisecond), errN, logN, dirSize(logs), share*100)
	if errN > maxStderrGrowth {
		t.Errorf("%s: stderr grew by %d bytes, over %d:\n%.2000s", what, errN, maxStderrGrowth, stderr.String())
	}
	if logN > maxLog || dirSize(logs) > maxLog {
		t.Errorf("%s: the logs grew by %d bytes (%d in all), over %d", what, logN, dirSize(logs), maxLog)
	}
	if share > maxCPUShare {
		t.Errorf("%s: zot used %.0f%% of a core reading the flood, over %.0f%%", what, share*100, maxCPUShare*100)
	}
}

// floodExtension writes an extension that says hello and ready, then
// runs body (sh) and returns its folder.
func floodExtension(t *testing.T, name, body string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	script := filepath.Join(dir, "flood.sh")
	writeExt(t, dir, fmt.Sprintf(`{"name":%q,"exec":"/bin/sh","args":[%q]}`, name, script), map[string]string{
		"flood.sh": fmt.Sprintf("printf '%%s\\n' '{\"type\":\"hello\",\"name\":\"%s\",\"version\":\"1\"}' '{\"type\":\"ready\"}'\n%s\n", name, body),
	})
	return dir
}

// An extension that prints garbage on stdout and stderr without end
// after ready: zot's stderr gets a bounded number of lines about it (and
// a count of the rest), its log stays within its cap, and reading it
// costs little, while zot keeps serving.
func TestExtensionGarbageFloodIsBounded(t *testing.T) {
	home := t.TempDir()
	ext := floodExtension(t, "flood", "yes 'stderr spam' >&2 &\nexec yes 'not json'")
	stderr := new(tailBuffer)
	p := startWith(t, stderr, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--ext", ext)...)
	r, _ := p.call(`{"id":"1","type":"get_extensions"}`)
	wantResponse(t, r, "get_extensions", true, "")
	waitFile(t, filepath.Join(home, "logs", "ext-flood.log"))
	flood(t, "extension garbage flood", p.cmd.Process.Pid, stderr, filepath.Join(home, "logs"), maxLogGrowth)
	r, _ = p.call(`{"id":"2","type":"get_state"}`)
	wantResponse(t, r, "get_state", true, "")
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// The count of what was dropped comes when its window is over, or
	// at the end.
	if !strings.Contains(stderr.String(), "lines about its output were dropped") {
		t.Errorf("no count of the dropped lines on stderr:\n%.3000s", stderr.String())
	}
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An MCP server that prints non-JSON lines on stdout without end: its
// log stays within its cap, zot's stderr hears nothing of it, reading it
// costs little, and its calls still work.
func TestMCPNonJSONFloodIsBounded(t *testing.T) {
	bin := goServer(t)
	home := t.TempDir()
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"f": map[string]any{"command": bin, "args": []string{"-flood"}}})
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"id": "e1", "name": "mcp__f__echo", "args": map[string]any{"text": "through the flood"}}}},
		map[string]any{"text": "done"},
	}}}})
	stderr := new(tailBuffer)
	p := startWith(t, stderr, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--script", s, "--strict-mcp-config", "--mcp-config", cfg)...)
	if info := mcpStatus(t, p, "f"); info.Status != "ready" {
		t.Fatalf("%+v", info)
	}
	flood(t, "MCP non-JSON flood", p.cmd.Process.Pid, stderr, filepath.Join(home, "logs"), maxNoteGrowth)
	p.send(`{"id":"1","type":"prompt","message":"echo"}`)
	r, _ := p.response()
	wantResponse(t, r, "prompt", true, "")
	if got, isErr := resultOf(t, p.untilDone(), "e1"); isErr || !strings.Contains(got, "echo: through the flood") {
		t.Fatalf("echo during the flood: %s (error %v)", got, isErr)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// An extension that sends valid notices without end under zot daemon:
// what reaches the daemon's stderr and its client is bounded (a count of
// the rest says so), and reading them costs little.
func TestExtensionNoticeFloodUnderDaemonIsBounded(t *testing.T) {
	home := doorDir(t)
	ext := floodExtension(t, "noisy", `exec yes '{"type":"notify","level":"info","message":"again"}'`)
	stderr := new(tailBuffer)
	d := startZotDaemonWith(t, stderr, doorEnv(home), "--ext", ext)
	waitText(t, stderr, "listening on")
	p, _ := dialDoor(t, filepath.Join(home, "daemon.sock"))
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	f := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, home))
	if f.Error != nil {
		t.Fatalf("session/new: %s", f.raw)
	}
	waitFile(t, filepath.Join(home, "logs", "ext-noisy.log"))
	flood(t, "extension notice flood under the daemon", d.cmd.Process.Pid, stderr, filepath.Join(home, "logs"), maxNoteGrowth)
	// The client keeps getting the notices, as _zot/notify, at most the
	// 20 let through in each 10 s (two windows at most in this test).
	var notices int
	for {
		select {
		case f := <-p.frames:
			if f.Method == "_zot/notify" && strings.Contains(f.raw, "again") {
				notices++
			}
			continue
		default:
		}
		break
	}
	t.Logf("the client got %d notices over the flood", notices)
	if notices == 0 || notices > 42 {
		t.Errorf("the client got %d notices of the flood, want 1 to 42", notices)
	}
}

// startZotDaemonWith is startZotDaemon with its stderr going to stderr.
func startZotDaemonWith(t *testing.T, stderr io.Writer, env []string, args ...string) *daemonProc {
	t.Helper()
	cmd := exec.Command(zotBin, append([]string{"daemon", "--provider", "scripted"}, args...)...)
	cmd.Env = env
	cmd.Stderr = stderr
	return startDaemonCmd(t, cmd)
}

// waitText waits until text was written to b.
func waitText(t *testing.T, b sized, text string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(b.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never came:\n%.3000s", text, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that leaves in the middle of the replay of a long session
// (session/load) leaves at most one line about it on the daemon's
// stderr, not one per message that could not reach it.
func TestDaemonClientGoneMidReplayLogsOnce(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "s")
	stderr := new(tailBuffer)
	d := startZotDaemonWith(t, stderr, doorEnv(home, "ZOT_SOCKET="+sock), "--script", writeScript(t, dir, 1, 4, 0))
	waitText(t, stderr, "listening on")
	id := storedSession(t, sock, t.TempDir())
	// The session grows to 40,000 messages: its prompt and answer again
	// and again.
	file := filepath.Join(home, "sessions", id+".jsonl")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(l, `"role":"user"`) || strings.Contains(l, `"role":"assistant"`) {
			msgs = append(msgs, l)
		}
	}
	if len(msgs) != 2 {
		t.Fatalf("the session file has %d messages, want 2:\n%s", len(msgs), data)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	block := strings.Repeat(strings.Join(msgs, "\n")+"\n", 1000)
	for range 20 {
		if _, err := f.WriteString(block); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	before := strings.Count(stderr.String(), "update to")
	// A raw client asks for the replay, reads a little of it and leaves.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "%s\n%s\n", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, id, dir))
	buf := make([]byte, 64<<10)
	if _, err := io.ReadAtLeast(c, buf, len(buf)); err != nil {
		t.Fatalf("reading the replay: %v", err)
	}
	c.Close()
	waitText(t, stderr, "left")
	// The replay runs on into the closed connection; a session/load by
	// another client is answered once it is over.
	p, _ := dialDoor(t, sock)
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	if f := p.call("2", "session/list", `{}`); f.Error != nil {
		t.Fatalf("session/list: %s", f.raw)
	}
	time.Sleep(time.Second)
	lines := strings.Count(stderr.String(), "update to") - before
	t.Logf("a client gone mid-replay of %d messages: %d lines about updates that failed", 2+40000, lines)
	if lines > 1 {
		t.Errorf("%d lines about the updates that failed to reach the client that left:\n%.3000s", lines, stderr.String())
	}
	if !d.running() {
		t.Fatal("the daemon ended")
	}
}

// An MCP server that sends valid notifications without end costs zot
// little: what zot does not use of them is read at a bounded rate.
func TestMCPNotificationFloodIsCheap(t *testing.T) {
	bin := goServer(t)
	home := t.TempDir()
	cfg := mcpConfig(t, t.TempDir(), map[string]any{"n": map[string]any{"command": bin, "args": []string{"-flood-notifications"}}})
	stderr := new(tailBuffer)
	p := startWith(t, stderr, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--strict-mcp-config", "--mcp-config", cfg)...)
	if info := mcpStatus(t, p, "n"); info.Status != "ready" {
		t.Fatalf("%+v", info)
	}
	flood(t, "MCP notification flood", p.cmd.Process.Pid, stderr, filepath.Join(home, "logs"), maxNoteGrowth)
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
