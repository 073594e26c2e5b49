package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// daemonProbe connects to the daemon's socket (argv[1]), sends
// initialize and prints the answer's first line, or REFUSED when the
// daemon closes the connection without one (before or after the
// request is written: a refused client may meet a broken pipe).
const daemonProbe = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
data = b""
try:
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n')
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError:
    pass
print("ANSWER " + data.decode() if data else "REFUSED")
`

// TestSandboxedCommandCannotDriveDaemon: a command confined by the
// sandbox reaches Unix sockets named by a path, the daemon's among them;
// a client there creates sessions whose sandbox it sets (full, under
// --permission ask) and answers their permission requests, so from
// inside the sandbox it could run anything. The daemon refuses a client
// that runs with no_new_privs when it does not itself (every confined
// command does), and serves the same client run unconfined.
func TestSandboxedCommandCannotDriveDaemon(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock))
	d.waitFor(t, "listening on")
	probe := filepath.Join(dir, "probe.py")
	if err := os.WriteFile(probe, []byte(daemonProbe), 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command("python3", probe, sock).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ANSWER ") || !strings.Contains(string(out), `"result"`) {
		t.Fatalf("an unconfined client: %v %s", err, out)
	}

	ws := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "args": map[string]any{"command": "python3 " + probe + " " + sock}}}},
		map[string]any{"text": "done"},
	}}}})
	for _, mode := range []string{"workspace-write", "read-only"} {
		p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", ws, "--sandbox", mode, "--script", s)
		res := promptResults(t, p)
		if len(res) != 1 {
			t.Fatalf("%s: %d results", mode, len(res))
		}
		if text := resultText(res[0]); !strings.Contains(text, "REFUSED") || strings.Contains(text, `"result"`) {
			t.Errorf("%s: a confined command was served by the daemon: %q", mode, text)
		}
	}
	if !strings.Contains(d.stderr.String(), "no_new_privs") {
		t.Errorf("the daemon's log does not say why it refused:\n%s", d.stderr.String())
	}
}
