package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// noticeFloodExtension is an extension that, once ready, pushes n notices of
// about 1 KB each, then waits for its shutdown.
const noticeFloodExtension = `import json, sys
def emit(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
emit({"type": "hello", "name": "flood", "version": "1"})
emit({"type": "ready"})
for i in range(int(sys.argv[1])):
    emit({"type": "notify", "level": "info", "message": "%d %s" % (i, "x" * 100000)})
for line in sys.stdin:
    if json.loads(line).get("type") == "shutdown":
        emit({"type": "shutdown_ack"})
        break
`

// Print mode writes what extensions push to stderr without holding up
// the answer: with a stderr nobody reads until the answer is out, a flood
// of notices (2 MB, far more than a pipe holds) does not stop the answer from
// reaching stdout, and the notices are on stderr once it is read.
func TestPrintModeNoticesDoNotWaitForStderr(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".zot", "extensions", "flood")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flood.py"), []byte(noticeFloodExtension), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": "flood", "exec": "python3", "args": []string{"flood.py", "20"}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, t.TempDir(), 2000, 10, 10) // an answer that streams for a while
	cmd := exec.Command(zotBin, "-p", "go", "--json", "--provider", "scripted", "--script", script, "--cwd", cwd, "--trust-project")
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	done := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"type":"done"`) {
				done <- true
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
		}
		done <- false
	}()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("stdout ended without the answer's done")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the answer is held up by a stderr nobody reads")
	}
	errb, _ := io.ReadAll(stderr)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, tail(string(errb)))
	}
	if !strings.Contains(string(errb), "[flood] info: 0 xxx") {
		t.Errorf("the notices are not on stderr:\n%s", tail(string(errb)))
	}
}

// tail is the end of a long text, for a failure's message.
func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// zot acp logs what extensions push to its stderr without holding up a
// turn: with a stderr nobody reads, a flood of notices (2 MB, far more
// than a pipe holds) still lets the prompt be answered.
func TestACPNoticesDoNotWaitForStderr(t *testing.T) {
	home := doorDir(t)
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".zot", "extensions", "flood")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flood.py"), []byte(noticeFloodExtension), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"name": "flood", "exec": "python3", "args": []string{"flood.py", "20"}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runZot(t, "", []string{"ZOT_HOME=" + home}, "trust", cwd); code != 0 {
		t.Fatalf("zot trust: %d %s %s", code, out, errOut)
	}
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted", "--script", writeScript(t, t.TempDir(), 2000, 10, 10), "--permission", "allow")
	cmd.Env = doorEnv(home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe() // not read until the answer is in
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := newDoorPeer(t, stdin, stdout)
	p.call("1", "initialize", `{"protocolVersion":1}`)
	id := sessionID(t, p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd)))
	// p.call fails the test when no frame comes for a while: before the
	// notices were logged off the stamping lock, none came once the
	// stderr pipe was full.
	f := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id))
	if f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
}
