package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

// zotBin is the binary under test: $ZOT_BIN, or one built for the tests.
var zotBin string

func TestMain(m *testing.M) {
	os.Exit(zotbin.Main(m, &zotBin, false))
}

// runProgram runs the example with args and returns its exit status and
// output. The deadline only guards against hangs.
func runProgram(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	// Unset, not empty: an empty token is a usage error. Setenv first so
	// the old value comes back after the test.
	t.Setenv("ZOTCORE_RPC_TOKEN", "")
	os.Unsetenv("ZOTCORE_RPC_TOKEN")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr zotbin.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestPromptDoneExitsZero(t *testing.T) {
	code, stdout, stderr := runProgram(t, "-zot", zotBin, "--", "--provider", "scripted", "--cwd", t.TempDir(), "list files")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if strings.TrimSpace(stdout) == "" || strings.Contains(stdout, "[tool]") || strings.Contains(stdout, "[usage]") {
		t.Errorf("stdout %q, want only the answer's text", stdout)
	}
	// The two messages' texts are paragraphs apart, as zot -p prints them.
	if !strings.Contains(stdout, "at work.\n\nThe bash tool ran") || !strings.HasSuffix(stdout, "back to me.\n") {
		t.Errorf("stdout %q: the messages' texts are not apart", stdout)
	}
	call := regexp.MustCompile(`(?m)^\[tool\] bash (.*)$`).FindStringSubmatch(stderr)
	var args map[string]string
	if call == nil || json.Unmarshal([]byte(call[1]), &args) != nil || args["command"] != "echo hello from zot && ls" {
		t.Errorf("stderr lacks the tool call:\n%s", stderr)
	}
	if !regexp.MustCompile(`\[usage\] in \d+ out \d+`).MatchString(stderr) {
		t.Errorf("stderr lacks the usage:\n%s", stderr)
	}
}

// TestUnpricedCostIsUnknown: the usage of a model without known prices
// (an id the catalog does not hold) reads "unknown", never a cost of $0.
func TestUnpricedCostIsUnknown(t *testing.T) {
	code, _, stderr := runProgram(t, "-zot", zotBin, "--", "--provider", "scripted", "--model", "not-in-the-catalog", "--cwd", t.TempDir(), "list files")
	if code != 0 || !regexp.MustCompile(`\[usage\] in \d+ out \d+ cache \d+/\d+ cost unknown \(total unknown\)`).MatchString(stderr) || strings.Contains(stderr, "$0.000000") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}

func TestErrorEventExitsOne(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	err := os.WriteFile(script, []byte(`{"turns":[{"steps":[{"error":{"status":400,"kind":"invalid_request_error","message":"bad request"}}]}]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runProgram(t, "-zot", zotBin, "--", "--provider", "scripted", "--script", script, "--cwd", t.TempDir(), "hi")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if !regexp.MustCompile(`error: .*bad request.*\(provider_error\)`).MatchString(stderr) {
		t.Errorf("stderr lacks the error:\n%s", stderr)
	}
}

func TestBadUseExitCodes(t *testing.T) {
	if code, _, _ := runProgram(t); code != 2 {
		t.Errorf("no message: exit %d, want 2", code)
	}
	if code, _, stderr := runProgram(t, "-zot", "/nonexistent/zot", "hi"); code != 1 {
		t.Errorf("missing binary: exit %d, want 1; stderr:\n%s", code, stderr)
	}
}

// cancelOnWrite is a writer that ends a context at its first write.
type cancelOnWrite struct {
	zotbin.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// TestInterruptAborts: an interrupt (the context ending) mid-answer aborts
// the prompt; the program says so and exits 1.
func TestInterruptAborts(t *testing.T) {
	t.Setenv("ZOTCORE_RPC_TOKEN", "")
	os.Unsetenv("ZOTCORE_RPC_TOKEN")
	script := filepath.Join(t.TempDir(), "script.json")
	err := os.WriteFile(script, []byte(`{"turns":[{"steps":[{"text":"`+strings.Repeat("slow ", 200)+`","chunk":2,"delay_ms":20}]}]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	interrupt, stop := context.WithCancel(ctx)
	defer stop()
	stdout := &cancelOnWrite{cancel: stop}
	var stderr zotbin.Buffer
	code := run(interrupt, []string{"-zot", zotBin, "--", "--provider", "scripted", "--script", script, "--cwd", t.TempDir(), "talk"}, stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "prompt: aborted") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if n := len(stdout.String()); n == 0 || n >= len(strings.Repeat("slow ", 200)) {
		t.Errorf("stdout has %d bytes of the answer, want some but not all", n)
	}
}
