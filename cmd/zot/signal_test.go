package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitExit waits for cmd and returns its exit status, failing after bound.
func waitExit(t *testing.T, cmd *exec.Cmd, bound time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(bound):
		cmd.Process.Kill()
		<-done
		t.Fatalf("zot did not exit within %v", bound)
		return -1
	}
}

// TestReaderGoneLeavesNothingBehind: `zot -p … | head -1` while a tool
// runs silently: zot notices its reader is gone, kills the tool's process
// group and exits 141, with no process left.
func TestReaderGoneLeavesNothingBehind(t *testing.T) {
	marker := fmt.Sprintf("%d", 800000+os.Getpid()%99999)
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "first line\nsecond line\n", "tool_calls": []any{map[string]any{
			"name": "bash", "args": map[string]any{"command": "sleep " + marker + "; echo done"},
		}}},
		map[string]any{"text": "never"},
	}}}})
	cmd := exec.Command(zotBin, "-p", "go", "--provider", "scripted", "--cwd", t.TempDir(), "--script", s)
	cmd.Env = cleanEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// Read the first line, wait for the tool to start, then go away as
	// head does.
	buf := make([]byte, 11)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "first line\n" {
		t.Fatalf("first line %q, %v", buf, err)
	}
	deadline := time.Now().Add(hangGuard)
	for len(processesWith(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the tool never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	out.Close()
	if code := waitExit(t, cmd, 20*time.Second); code != 128+int(syscall.SIGPIPE) {
		t.Errorf("exit %d, want %d", code, 128+int(syscall.SIGPIPE))
	}
	for time.Now().Before(deadline) && len(processesWith(marker)) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
		for _, pid := range left {
			var n int
			fmt.Sscan(pid, &n)
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
}

// TestSignalWithNobodyReading: SIGTERM, SIGINT and SIGHUP end zot rpc
// within the documented time even when the client reads nothing of a
// long answer, with 128 + the signal number.
func TestSignalWithNobodyReading(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": strings.Repeat("flood ", 20000), "chunk": 1},
	}}}})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(zotBin, rpcArgs(t, "--script", s)...)
			cmd.Env = cleanEnv()
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(in, `{"id":"1","type":"prompt","message":"talk"}`)
			// Read only the first bytes (so zot has started and handles
			// signals), then nothing more: the pipe and the queue fill.
			first := make([]byte, 16)
			if _, err := io.ReadFull(out, first); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			cmd.Process.Signal(sig)
			if code := waitExit(t, cmd, 15*time.Second); code != 128+int(sig) {
				t.Errorf("exit %d, want %d", code, 128+int(sig))
			}
		})
	}
}

// TestPrintModeSignalWithNobodyReading: zot -p ends on SIGTERM even when
// its stdout is full and nobody reads it.
func TestPrintModeSignalWithNobodyReading(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": strings.Repeat("flood ", 40000), "chunk": 1},
	}}}})
	cmd := exec.Command(zotBin, "-p", "talk", "--json", "--provider", "scripted", "--cwd", t.TempDir(), "--script", s)
	cmd.Env = cleanEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 16)
	if _, err := io.ReadFull(out, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the pipe fills
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd, 15*time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want %d", code, 128+int(syscall.SIGTERM))
	}
}

// TestRPCReaderGoneIsQuiet: `zot rpc … | head -1` ends zot rpc with
// SIGPIPE's status and nothing on stderr, whether zot notices the reader
// gone before a write or by a write that fails.
func TestRPCReaderGoneIsQuiet(t *testing.T) {
	// An answer far longer than a pipe holds: zot is still writing when
	// the reader goes.
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": strings.Repeat("flood ", 20000), "chunk": 1},
	}}}})
	for i := range 5 {
		cmd := exec.Command(zotBin, "rpc", "--provider", "scripted", "--cwd", t.TempDir(), "--script", s)
		cmd.Env = cleanEnv()
		cmd.Stdin = strings.NewReader(`{"id":"1","type":"prompt","message":"hello"}` + "\n")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		out.Close()
		if code := waitExit(t, cmd, 20*time.Second); code != 128+int(syscall.SIGPIPE) || stderr.Len() > 0 {
			t.Errorf("run %d: exit %d, stderr %q; want %d and nothing", i, code, stderr.String(), 128+int(syscall.SIGPIPE))
		}
	}
}
