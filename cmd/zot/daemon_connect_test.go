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
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
)

// docBlock returns the first fenced block of kind fence ("```json\n")
// after heading in a doc of the repository.
func docBlock(t *testing.T, doc, heading, fence string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), heading)
	if !ok {
		t.Fatalf("%s has no %q", doc, heading)
	}
	_, rest, ok = strings.Cut(rest, fence)
	if !ok {
		t.Fatalf("%s has no %q block after %q", doc, fence, heading)
	}
	block, _, _ := strings.Cut(rest, "```")
	return block
}

// zotOnPath returns a PATH whose first directory holds the zot under
// test as "zot", as `make install` leaves it.
func zotOnPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(zotBin, filepath.Join(dir, "zot")); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// startConnect starts zot daemon connect with env, in a folder of its
// own, its stdin and stdout piped; it is killed at cleanup unless a test
// waited for it.
func startConnect(t *testing.T, env []string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, *zotbin.Buffer) {
	t.Helper()
	cmd := exec.Command(zotBin, "daemon", "connect")
	cmd.Env = env
	cmd.Dir = t.TempDir()
	stdin, stdout, stderr := startPiped(t, cmd)
	return cmd, stdin, stdout, stderr
}

// The quick start of docs/daemon.md as a person does it: zot daemon,
// then the page's lines typed into zot daemon connect, the id of the
// new session pasted into the prompt; Ctrl-D ends it with status 0.
func TestDaemonDocsQuickStart(t *testing.T) {
	if start := docBlock(t, "docs/daemon.md", "## Quick start", "```sh\n"); !strings.Contains(start, "zot daemon --provider scripted &") || !strings.Contains(start, "\nzot daemon connect ") {
		t.Fatalf("the quick start no longer starts zot daemon and zot daemon connect:\n%s", start)
	}
	dir := doorDir(t)
	env := doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "d.sock"))
	d := startZotDaemon(t, env)
	d.waitFor(t, "listening on")

	cmd, stdin, stdout, stderr := startConnect(t, env)
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	// answer reads frames until the answer to id; a permission question
	// on the way is allowed, as a person would.
	answer := func(id int) map[string]any {
		t.Helper()
		for lines.Scan() {
			var f map[string]any
			if err := json.Unmarshal(lines.Bytes(), &f); err != nil {
				t.Fatalf("not JSON: %q", lines.Text())
			}
			if f["method"] == "session/request_permission" {
				fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%q,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`+"\n", f["id"])
				continue
			}
			if f["method"] == nil && f["id"] == float64(id) {
				if f["error"] != nil {
					t.Fatalf("answer %d: %s", id, lines.Text())
				}
				return f["result"].(map[string]any)
			}
		}
		t.Fatalf("no answer to %d: %v\n%s", id, lines.Err(), stderr)
		return nil
	}
	var sessionID string
	for i, line := range strings.Split(strings.TrimSpace(docBlock(t, "docs/daemon.md", "Then paste lines", "```json\n")), "\n") {
		line = strings.ReplaceAll(line, "<the id from 2>", sessionID)
		line = strings.ReplaceAll(line, `"cwd":"/tmp"`, fmt.Sprintf(`"cwd":%q`, cmd.Dir))
		fmt.Fprintln(stdin, line)
		res := answer(i + 1)
		switch i + 1 {
		case 2:
			sessionID, _ = res["sessionId"].(string)
		case 3:
			if res["stopReason"] != "end_turn" {
				t.Errorf("the prompt: %v", res)
			}
		case 4:
			if res["version"] == nil {
				t.Errorf("status: %v", res)
			}
		}
	}
	if sessionID == "" {
		t.Fatal("no session was made")
	}
	stdin.Close() // Ctrl-D
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		t.Error(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("zot daemon connect at the end of stdin: %v\n%s", err, stderr)
	}
}

// With no daemon, zot daemon connect says where it looked and what to do.
func TestDaemonConnectWithoutDaemon(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "none.sock")
	stdout, stderr, code := runZot(t, "", []string{"ZOT_SOCKET=" + sock}, "daemon", "connect")
	want := "zot: no zot daemon answers at " + sock + ": start one with zot daemon (or set ZOT_SOCKET to its socket): "
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
	if _, stderr, code := runZot(t, "", nil, "daemon", "connect", "--provider", "scripted"); code != 2 || !strings.HasPrefix(stderr, "zot: --provider does not apply to zot daemon connect\n") {
		t.Errorf("connect with an agent flag: exit %d, %q", code, stderr)
	}
}

// The clients of docs/daemon.md, in Python and in TypeScript with ACP's
// SDK, run as written against a daemon started as in the quick start,
// and exit by themselves.
func TestDaemonDocsClients(t *testing.T) {
	dir := doorDir(t)
	env := doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "d.sock"))
	d := startZotDaemon(t, env, "--permission", "ask")
	d.waitFor(t, "listening on")
	env = append(env, zotOnPath(t))

	run := func(t *testing.T, name string, argv ...string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Dir = t.TempDir()
		out := new(zotbin.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil || !strings.Contains(out.String(), "end_turn") {
				t.Errorf("the %s client: %v\n%s", name, err, out)
			}
		case <-time.After(hangGuard):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("the %s client did not exit:\n%s", name, out)
		}
	}
	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("no python3")
		}
		file := filepath.Join(t.TempDir(), "client.py")
		if err := os.WriteFile(file, []byte(docBlock(t, "docs/daemon.md", "Python, with the standard library", "```python\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, "Python", py, file)
	})
	t.Run("node", func(t *testing.T) {
		node, err := exec.LookPath("node")
		sdk, _ := filepath.Abs(filepath.Join("..", "..", "testtools", "node_modules"))
		if err == nil {
			_, err = os.Stat(filepath.Join(sdk, "@agentclientprotocol", "sdk"))
		}
		if err != nil {
			msg := fmt.Sprintf("node or @agentclientprotocol/sdk is missing (%v): run make testtools", err)
			if os.Getenv("ZOT_E2E_REQUIRED") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		dir := t.TempDir()
		if err := os.Symlink(sdk, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "client.mjs")
		if err := os.WriteFile(file, []byte(docBlock(t, "docs/daemon.md", "TypeScript, with ACP's own SDK", "```js\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, "TypeScript", node, file)
	})
}

// A daemon that stops while zot daemon connect still has stdin to relay
// is not a normal end: connect exits 1 and says the daemon hung up, so a
// script can tell it from the end of its own input.
func TestDaemonConnectDaemonLeavesFirst(t *testing.T) {
	dir := doorDir(t)
	env := doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "d.sock"))
	d := startZotDaemon(t, env)
	d.waitFor(t, "listening on")

	cmd, stdin, stdout, stderr := startConnect(t, env)
	defer stdin.Close()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"id":1,"result"`) {
		t.Fatalf("no answer to initialize: %q %v\n%s", lines.Text(), lines.Err(), stderr)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.waitExit(t)
	if _, err := io.Copy(io.Discard, stdout); err != nil {
		t.Error(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		want := "zot: zot daemon connect: the daemon closed the connection before the end of stdin\n"
		if code != 1 || stderr.String() != want {
			t.Errorf("exit %d (%v), stderr %q; want exit 1 and %q", code, err, stderr, want)
		}
	case <-time.After(hangGuard):
		t.Fatalf("zot daemon connect did not exit after its daemon left\n%s", stderr)
	}
}

// zot daemon connect talks only to a daemon of the user who runs it: a
// socket served by another user's process (planted in a shared
// directory, or named by a wrong ZOT_SOCKET) is left at once, with a
// message naming that user, before anything from stdin is sent to it.
// It needs root, to start a process as another user.
func TestDaemonConnectOtherUsersSocket(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to start a daemon as another user")
	}
	const other = 65534 // nobody
	// A directory tree the other user can reach: the binary copied into
	// it, a home and a socket directory of their own.
	dir, err := os.MkdirTemp("", "zdo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(zotBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "zot")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"home", "run"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(dir, sub), other, other); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(dir, "run", "d.sock")
	cmd := exec.Command(bin, "daemon", "--provider", "scripted")
	cmd.Env = doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: other, Gid: other}}
	d := startDaemonCmd(t, cmd)
	d.waitFor(t, "listening on")

	stdout, stderr, code := runZot(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n",
		[]string{"ZOT_HOME=" + filepath.Join(t.TempDir(), "home"), "ZOT_SOCKET=" + sock}, "daemon", "connect")
	want := fmt.Sprintf("zot: zot daemon connect: %s is served by a process of uid %d, not of this user (uid 0): connect talks only to your own daemon (set ZOT_SOCKET to its socket)\n", sock, other)
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
}

// A stdin that cannot be read (a directory) is reported as such, not as
// the daemon hanging up.
func TestDaemonConnectUnreadableStdin(t *testing.T) {
	dir := doorDir(t)
	env := doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+filepath.Join(dir, "d.sock"))
	d := startZotDaemon(t, env)
	d.waitFor(t, "listening on")
	in, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(zotBin, "daemon", "connect")
	cmd.Env = env
	cmd.Stdin = in
	stderr := new(zotbin.Buffer)
	cmd.Stderr = stderr
	err = cmd.Run()
	want := "zot: zot daemon connect: reading stdin: read /dev/stdin: is a directory\n"
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || stderr.String() != want {
		t.Errorf("%v, stderr %q; want exit 1 and %q", err, stderr, want)
	}
}
