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
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// asNobody runs a command as uid and gid 65534 (nobody), the neighbour
// on a shared machine, and fails the test if it fails.
func asNobody(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v as nobody: %v\n%s", name, args, err, out)
	}
}

// sharedStickyDir is a directory every user may write, sticky, as /tmp
// is: the kind of directory ZOT_SOCKET may name.
func sharedStickyDir(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skipf("this test plays another user (nobody), which needs root (uid %d)", os.Getuid())
	}
	dir := doorDir(t)
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return shared
}

// Another user who plants the lock file's name in a shared directory
// gets no file of the daemon's user overwritten, and the daemon says
// what it found instead of following or truncating it.
func TestDaemonLockFilePlantedByAnotherUser(t *testing.T) {
	shared := sharedStickyDir(t)
	home := filepath.Join(filepath.Dir(shared), "home")
	sock := filepath.Join(shared, "z.sock")

	t.Run("symlink", func(t *testing.T) {
		// A file only the daemon's user may write, which the neighbour
		// points the lock's name at.
		precious := filepath.Join(filepath.Dir(shared), "precious.txt")
		if err := os.WriteFile(precious, []byte("keep me\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		asNobody(t, "ln", "-s", precious, sock+".lock")
		t.Cleanup(func() { os.Remove(sock + ".lock") })
		d := startZotDaemon(t, doorEnv(home, "ZOT_SOCKET="+sock))
		d.waitExit(t)
		if b, _ := os.ReadFile(precious); string(b) != "keep me\n" {
			t.Errorf("the symlink's target was changed to %q", b)
		}
		if code := d.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(d.stderr.String(), "is a symbolic link") || !strings.Contains(d.stderr.String(), "uid 65534") {
			t.Errorf("daemon: exit %d, %q; want exit 1 naming a symbolic link of uid 65534", code, d.stderr)
		}
	})

	t.Run("plain file", func(t *testing.T) {
		asNobody(t, "sh", "-c", "umask 022; echo squat > "+sock+".lock")
		t.Cleanup(func() { os.Remove(sock + ".lock") })
		d := startZotDaemon(t, doorEnv(home, "ZOT_SOCKET="+sock))
		d.waitExit(t)
		if b, _ := os.ReadFile(sock + ".lock"); string(b) != "squat\n" {
			t.Errorf("the other user's file was changed to %q", b)
		}
		if code := d.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(d.stderr.String(), "belongs to uid 65534") || !strings.Contains(d.stderr.String(), "ZOT_SOCKET") {
			t.Errorf("daemon: exit %d, %q; want exit 1 naming the owner and ZOT_SOCKET", code, d.stderr)
		}
	})

	t.Run("lock removed under a live daemon", func(t *testing.T) {
		env := doorEnv(home, "ZOT_SOCKET="+sock)
		first := startZotDaemon(t, env)
		first.waitFor(t, "listening on "+sock)
		if err := os.Remove(sock + ".lock"); err != nil {
			t.Fatal(err)
		}
		second := startZotDaemon(t, env)
		second.waitExit(t)
		if code := second.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(second.stderr.String(), "stop it first") {
			t.Errorf("second daemon: exit %d, %q; want exit 1 and the live socket left alone", code, second.stderr)
		}
		// The first daemon still serves its socket.
		p, _ := dialDoor(t, sock)
		if f := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); f.Error != nil {
			t.Fatalf("the first daemon after the second's attempt: %s", f.raw)
		}
		_ = first.cmd.Process.Signal(syscall.SIGTERM)
		first.waitExit(t)
		os.Remove(sock + ".lock")
	})
}
