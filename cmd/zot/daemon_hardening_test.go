package main

// Tests of the daemon door against hostile neighbours, slow links and
// clients that leave, through the real binary: the endpoint's lock file
// under another user's hand, readers that read slowly but steadily,
// shutdown with a client that reads nothing, a terminal client that
// leaves mid-turn, and answers of the wrong shape.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openDaemonSession initializes p with caps and opens a session in cwd;
// it returns the session's id.
func openDaemonSession(t *testing.T, p *acpPeer, caps, cwd string) string {
	t.Helper()
	if f, _ := p.call("1", "initialize", fmt.Sprintf(`{"protocolVersion":1,"clientCapabilities":%s}`, caps), ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd), "")
	return sessionID(t, f)
}

// readFile returns path's content, "" when it cannot be read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("reading %s: %v", path, err)
	}
	return string(b)
}

// A turn whose terminal-capable client has left runs its bash calls in
// zot's own shell, as it writes its files to the disk.
func TestDaemonBashFallsBackToTheShellAfterTheTerminalClientLeft(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "0123456789", "chunk": 1, "delay_ms": 100,
			"tool_calls": []any{map[string]any{"id": "b1", "name": "bash", "args": map[string]any{"command": "echo from-zot > ran.txt"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"id": "w1", "name": "write", "args": map[string]any{"path": "written.txt", "content": "disk\n"}}}},
		map[string]any{"text": "Done."},
	}}}})
	d := startZotDaemon(t, doorEnv(home), "--script", s, "--permission", "allow")
	d.waitFor(t, "listening on")
	dp, conn := dialDoor(t, filepath.Join(home, "daemon.sock"))
	p := checked(t, dp)
	id := openDaemonSession(t, p, `{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}`, work)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	for u := p.next(); !strings.Contains(string(u.Params), `"agent_message_chunk"`); u = p.next() {
		// the session's first updates; the turn is under way at its text
	}
	conn.Close() // the editor goes away mid-turn

	// The turn ends into the session file, bash's result a success.
	deadline := time.Now().Add(hangGuard)
	for {
		b, _ := os.ReadFile(filepath.Join(home, "sessions", id+".jsonl"))
		if strings.Contains(string(b), "Done.") {
			if strings.Contains(string(b), "cannot run the command") {
				t.Errorf("bash failed in the session file:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end:\n%s\n%s", b, d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b := readFile(t, filepath.Join(work, "written.txt")); b != "disk\n" {
		t.Errorf("written.txt = %q", b)
	}
	if b := readFile(t, filepath.Join(work, "ran.txt")); b != "from-zot\n" {
		t.Errorf("ran.txt = %q, want bash run by zot's shell", b)
	}
}

// decodeJSON decodes raw into v or fails the test.
func decodeJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}
