//go:build unix

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// hangGuard bounds calls that must return long before the commands they
// run would end on their own.
const hangGuard = 20 * time.Second

func bashConfig(t *testing.T) Config {
	dir := t.TempDir()
	return Config{CWD: dir, SpillDir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}}
}

// runBash runs command with extra args and fails if the call hangs.
func runBash(t *testing.T, ctx context.Context, cfg Config, args map[string]any, progress func(string)) Result {
	t.Helper()
	tl := toolByName(t, cfg, "bash")
	raw := fmt.Sprintf(`{"command":%s}`, strconv.Quote(args["command"].(string)))
	if to, ok := args["timeout"]; ok {
		raw = fmt.Sprintf(`{"command":%s,"timeout":%v}`, strconv.Quote(args["command"].(string)), to)
	}
	type outcome struct {
		res Result
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		res, err := tl.Run(ctx, Call{ID: "b", Args: []byte(raw), Progress: progress})
		ch <- outcome{res, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("bash: %v", o.err)
		}
		return o.res
	case <-time.After(hangGuard):
		t.Fatalf("bash %q did not return within %v", args["command"], hangGuard)
	}
	return Result{}
}

// pidGone waits until pid no longer runs (a zombie counts as gone: it has
// exited and only awaits reaping by its new parent).
func pidGone(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return true
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func firstPID(t *testing.T, text string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(\d+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no pid in output %q", text)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestBashOutputExitCodeAndCWD(t *testing.T) {
	cfg := bashConfig(t)
	got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "pwd; echo to-stderr >&2; echo done"}, nil))
	want := cfg.CWD + "\nto-stderr\ndone\n[exit code 0]"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	wantErr(t, runBash(t, context.Background(), cfg, map[string]any{"command": "echo failing; exit 3"}, nil), "failing\n[exit code 3]")
	if got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "true"}, nil)); got != "(no output)\n[exit code 0]" {
		t.Errorf("no output: %q", got)
	}
	wantErr(t, runBash(t, context.Background(), cfg, map[string]any{"command": "kill -9 $$"}, nil), "signal: killed")
}

func TestBashScrubsCredentials(t *testing.T) {
	cfg := bashConfig(t)
	cfg.Env = append(cfg.Env, "OPENAI_API_KEY=test-key", "ANTHROPIC_BASE_URL=http://127.0.0.1", "ZOTCORE_RPC_TOKEN=test-token", "KEEP_ME=1")
	got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "env"}, nil))
	if !strings.Contains(got, "KEEP_ME=1") {
		t.Errorf("KEEP_ME missing from %q", got)
	}
	for _, bad := range []string{"OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ZOTCORE_RPC_TOKEN", "test-key"} {
		if strings.Contains(got, bad) {
			t.Errorf("environment leaks %s", bad)
		}
	}
}

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	cfg := bashConfig(t)
	cfg.BashTimeout = 500 * time.Millisecond
	res := runBash(t, context.Background(), cfg, map[string]any{"command": "sleep 30 & echo $!; wait"}, nil)
	text := wantErr(t, res, "[timed out after 0.5s]")
	pid := firstPID(t, text)
	if !pidGone(t, pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("child sleep %d survived the timeout", pid)
	}
}

func TestBashEscalatesToSIGKILL(t *testing.T) {
	cfg := bashConfig(t)
	res := runBash(t, context.Background(), cfg, map[string]any{
		"command": "trap '' TERM; sleep 30 & echo $!; wait; wait",
		"timeout": 0.3,
	}, nil)
	text := wantErr(t, res, "timed out after 0.3s")
	pid := firstPID(t, text)
	if !pidGone(t, pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("SIGTERM-immune child %d survived", pid)
	}
}

func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	cfg := bashConfig(t)
	res := runBash(t, context.Background(), cfg, map[string]any{"command": "sleep 30 & echo $!; echo started"}, nil)
	text := wantOK(t, res)
	pid := firstPID(t, text)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !strings.Contains(text, "started\n[exit code 0") {
		t.Errorf("result %q", text)
	}
}

func TestBashAbortViaContext(t *testing.T) {
	cfg := bashConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	res := runBash(t, ctx, cfg, map[string]any{"command": "echo begun; sleep 30 & echo $!; wait"}, nil)
	text := wantErr(t, res, "begun", "[aborted]")
	if pid := firstPID(t, text); !pidGone(t, pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("child %d survived the abort", pid)
	}
	// Already cancelled: nothing runs.
	wantErr(t, runBash(t, ctx, cfg, map[string]any{"command": "echo never"}, nil), "aborted")
}

func TestBashTimeoutOverride(t *testing.T) {
	cfg := bashConfig(t)
	cfg.BashTimeout = 200 * time.Millisecond
	got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "sleep 0.5; echo finished", "timeout": 30}, nil))
	if got != "finished\n[exit code 0]" {
		t.Errorf("got %q", got)
	}
}

func TestBashTruncatesAndSpills(t *testing.T) {
	cfg := bashConfig(t)
	got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "seq 1 100000"}, nil))
	if !strings.HasPrefix(got, "1\n2\n3\n") || !strings.HasSuffix(got, "99999\n100000\n[exit code 0]") {
		t.Errorf("head/tail wrong: %q ... %q", got[:20], got[len(got)-40:])
	}
	m := regexp.MustCompile(`omitted; full output \((\d+) bytes\) saved to (\S+) \.\.\.\]`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no spill marker in result")
	}
	full, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatalf("spill file: %v", err)
	}
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if string(full) != want.String() || m[1] != strconv.Itoa(want.Len()) {
		t.Errorf("spill file holds %d bytes, want %d", len(full), want.Len())
	}
	if lines := strings.Count(got, "\n"); lines > 2*captureLines+10 {
		t.Errorf("result has %d lines", lines)
	}
}

func TestBashProgress(t *testing.T) {
	cfg := bashConfig(t)
	var mu sync.Mutex
	var chunks []string
	progress := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		chunks = append(chunks, s)
	}
	// The euro sign is written one byte at a time with pauses in between,
	// so flushes fall inside the sequence.
	cmd := `printf 'start\n'; printf '\342'; sleep 0.25; printf '\202'; sleep 0.25; printf '\254\n'; printf 'bad \377\n'`
	got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": cmd}, progress))
	if got != "start\n€\nbad \uFFFD\n[exit code 0]" {
		t.Errorf("result %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if joined := strings.Join(chunks, ""); joined != "start\n€\nbad \uFFFD\n" {
		t.Errorf("progress joined = %q", joined)
	}
	for _, c := range chunks {
		if !utf8.ValidString(c) {
			t.Errorf("invalid chunk %q", c)
		}
	}
	if len(chunks) < 2 {
		t.Errorf("expected several progress chunks, got %q", chunks)
	}
}

// credentialVars are variables that hold provider and zot secrets.
var credentialVars = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY",
	"GEMINI_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY",
	"MISTRAL_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "AZURE_OPENAI_API_KEY", "HF_TOKEN",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "ZOTCORE_RPC_TOKEN",
}

// The scrub keeps secrets in zot's own environment out of what a command
// prints about its environment, whichever way it asks.
func TestBashShowsNoCredentialsOfZotsEnvironment(t *testing.T) {
	for _, name := range credentialVars {
		t.Setenv(name, "zot-test-secret-"+strings.ToLower(name))
	}
	t.Setenv("ZOT_TEST_KEEP_ME", "kept")
	cfg := Config{CWD: t.TempDir(), SpillDir: t.TempDir()} // Env nil: zot's own
	for _, command := range []string{"env", "printenv", "set", "export -p", "declare -p"} {
		got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": command}, nil))
		if !strings.Contains(got, "ZOT_TEST_KEEP_ME") {
			t.Errorf("%s: ZOT_TEST_KEEP_ME missing, so the command did not list the environment: %q", command, got)
		}
		for _, name := range credentialVars {
			if strings.Contains(got, name) {
				t.Errorf("%s shows %s", command, name)
			}
		}
		if strings.Contains(got, "zot-test-secret") {
			t.Errorf("%s shows a credential's value", command)
		}
	}
}

// TestBashShellFoundAgainWhenGone checks that the shell bash commands run
// with, looked up once, is looked up again when it is gone, and again when
// PATH changes.
func TestBashShellFoundAgainWhenGone(t *testing.T) {
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "bash")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho wrapped\nexec /bin/sh \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfg := bashConfig(t)
	if got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "echo hi"}, nil)); got != "wrapped\nhi\n[exit code 0]" {
		t.Fatalf("with the wrapper first in PATH: %q", got)
	}
	if err := os.Remove(wrapper); err != nil {
		t.Fatal(err)
	}
	if got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "echo hi"}, nil)); got != "hi\n[exit code 0]" {
		t.Errorf("after the wrapper was removed: %q", got)
	}
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho wrapped\nexec /bin/sh \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if got := wantOK(t, runBash(t, context.Background(), cfg, map[string]any{"command": "echo hi"}, nil)); got != "wrapped\nhi\n[exit code 0]" {
		t.Errorf("after PATH changed: %q", got)
	}
}
