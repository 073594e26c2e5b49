package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// extScript is a scripted turn whose model calls the extension's tool and
// bash (with an argument the guard refuses), then answers.
func extScript(t *testing.T) string {
	return script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "Calling.", "tool_calls": []any{
			map[string]any{"id": "call_echo", "name": "py_echo", "args": map[string]any{"text": "x"}},
			map[string]any{"id": "call_rm", "name": "bash", "args": map[string]any{"command": "rm -rf ./nothing"}},
		}},
		map[string]any{"text": "Done."},
	}}}})
}

// printResults runs `zot -p --json` and returns the tool results by call
// id, and stderr.
func printResults(t *testing.T, cwd string, args ...string) (map[string]string, string) {
	t.Helper()
	all := append([]string{"-p", "go", "--json", "--provider", "scripted", "--script", extScript(t), "--cwd", cwd}, args...)
	stdout, stderr, code := runZot(t, "", nil, all...)
	if code != 0 {
		t.Fatalf("zot %q: exit %d\nstderr: %s", all, code, stderr)
	}
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		ev, err := wire.DecodeEvent([]byte(line))
		if err != nil {
			t.Fatalf("line %s: %v", line, err)
		}
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			var text string
			for _, b := range r.Content {
				if tb, ok := b.(*wire.TextBlock); ok {
					text += tb.Text
				}
			}
			results[r.ID] = text
		}
	}
	return results, stderr
}

// Print mode finds and loads extensions as rpc mode does: a project
// extension's tool is offered to the model, its tool_call intercept
// rewrites and blocks calls, and what it pushes is written to stderr.
func TestPrintModeLoadsExtensions(t *testing.T) {
	cwd := t.TempDir()
	pyExtension(t, filepath.Join(cwd, ".zot", "extensions"), "py", "guard")
	results, stderr := printResults(t, cwd, "--trust-project")
	if got := results["call_echo"]; got != "echo: guarded x" {
		t.Errorf("the extension's tool answered %q; stderr: %s", got, stderr)
	}
	if got := results["call_rm"]; !strings.Contains(got, "refused: rm -rf") {
		t.Errorf("the guard did not block bash: %q", got)
	}
	for _, want := range []string{"[py] info: event turn_start 1", "[py] info: event tool_call py_echo", "[py] info: event turn_end"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// --no-ext turns discovery off in print mode, and --ext still loads.
func TestPrintModeNoExt(t *testing.T) {
	cwd := t.TempDir()
	pyExtension(t, filepath.Join(cwd, ".zot", "extensions"), "py", "guard")
	results, stderr := printResults(t, cwd, "--no-ext")
	if got := results["call_echo"]; strings.HasPrefix(got, "echo:") {
		t.Errorf("--no-ext still loaded the project's extension: %q", got)
	}
	if strings.Contains(stderr, "[py]") {
		t.Errorf("--no-ext: the extension spoke: %s", stderr)
	}
	explicit := pyExtension(t, t.TempDir(), "py", "ok")
	results, _ = printResults(t, cwd, "--no-ext", "--ext", explicit)
	if got := results["call_echo"]; got != "echo: x" {
		t.Errorf("--ext with --no-ext: the tool answered %q", got)
	}
	if got := results["call_rm"]; strings.Contains(got, "refused") {
		t.Errorf("the project's guard ran despite --no-ext: %q", got)
	}
}

// A broken manifest in print mode is one line on stderr; the prompt runs.
func TestPrintModeBrokenManifest(t *testing.T) {
	cwd := t.TempDir()
	folder := filepath.Join(cwd, ".zot", "extensions", "bad")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "extension.json"), []byte(`{"name":"bad"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pyExtension(t, filepath.Join(cwd, ".zot", "extensions"), "py", "ok")
	results, stderr := printResults(t, cwd, "--trust-project")
	if !strings.Contains(stderr, "extension.json") || !strings.Contains(stderr, "exec") {
		t.Errorf("stderr does not name the broken manifest and its field:\n%s", stderr)
	}
	if got := results["call_echo"]; got != "echo: x" {
		t.Errorf("the good extension's tool answered %q", got)
	}
}

// Nothing an extension started outlives print mode: not the extension,
// not a child it left in its process group.
func TestPrintModeLeavesNoProcess(t *testing.T) {
	cwd := t.TempDir()
	_, stderr := printResults(t, cwd, "--ext", pyExtension(t, t.TempDir(), "py", "group"))
	var parent, child int
	i := strings.Index(stderr, "[py] info: pids ")
	if i < 0 {
		t.Fatalf("no pids on stderr: %s", stderr)
	}
	if _, err := fmt.Sscanf(stderr[i:], "[py] info: pids %d %d", &parent, &child); err != nil {
		t.Fatalf("%v: %s", err, stderr[i:])
	}
	deadline := time.Now().Add(hangGuard)
	for _, pid := range []int{parent, child} {
		for processRuns(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived zot -p", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// processRuns reports whether process pid runs (a zombie does not).
func processRuns(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
