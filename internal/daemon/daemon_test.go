package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/zotbin"
)

// The test binary doubles as a daemon (ZOT_TEST_DAEMON=1) serving a small
// handler, and as a client that connects and reports what happened
// (ZOT_TEST_CLIENT=<socket>), so the tests drive real processes over a
// real socket.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("ZOT_TEST_DAEMON") == "1":
		os.Exit(runTestDaemon())
	case os.Getenv("ZOT_TEST_CLIENT") != "":
		os.Exit(runTestClient(os.Getenv("ZOT_TEST_CLIENT")))
	}
	os.Exit(m.Run())
}

func runTestDaemon() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	h := jsonrpc.HandlerFunc(func(ctx context.Context, c *jsonrpc.Conn, req *jsonrpc.Request) jsonrpc.Reply {
		switch req.Method {
		case "echo":
			return jsonrpc.Result(req.Params)
		case "flood": // notifications until the client is gone
			return jsonrpc.Async(func(ctx context.Context) (any, error) {
				for i := 0; ; i++ {
					if err := c.Notify(ctx, "update", map[string]any{"i": i, "pad": strings.Repeat("x", 1024)}); err != nil {
						return nil, err
					}
				}
			})
		}
		return jsonrpc.Fail(jsonrpc.MethodNotFound(req.Method))
	})
	grace, _ := time.ParseDuration(os.Getenv("ZOT_TEST_GRACE"))
	err := Run(ctx, Options{
		Ephemeral:  os.Getenv("ZOT_TEST_EPHEMERAL") == "1",
		Grace:      grace,
		NewHandler: jsonrpc.Static(h),
		RPC:        jsonrpc.Options{StallTimeout: 500 * time.Millisecond, QueueFrames: 64},
		Log:        os.Stderr,
		Stopping:   func(context.Context) { fmt.Fprintln(os.Stderr, "test daemon: stopping hook") },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// runTestClient connects, sends an echo, and prints what it got: the
// answer, "closed" when the daemon hung up, or the connect error.
func runTestClient(path string) int {
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial:", err)
		return 0
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(c, `{"jsonrpc":"2.0","id":1,"method":"echo","params":["hi"]}`+"\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case err == io.EOF || (err != nil && strings.Contains(err.Error(), "reset")):
		fmt.Println("closed")
	case err != nil:
		fmt.Println("read:", err)
	default:
		fmt.Print("answer: ", line)
	}
	return 0
}

// daemonProc is a running test daemon.
type daemonProc struct {
	cmd    *exec.Cmd
	stderr *zotbin.Buffer
	done   chan struct{}
	err    error
}

func startDaemon(t *testing.T, env ...string) *daemonProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{stderr: new(zotbin.Buffer), done: make(chan struct{})}
	d.cmd = exec.Command(exe)
	d.cmd.Env = append(os.Environ(), append([]string{"ZOT_TEST_DAEMON=1"}, env...)...)
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		<-d.done
	})
	return d
}

// waitListening waits until the daemon logs that it listens.
func (d *daemonProc) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(d.stderr.String(), "listening on") {
		select {
		case <-d.done:
			t.Fatalf("daemon exited: %v\n%s", d.err, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not listening:\n%s", d.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (d *daemonProc) waitExit(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(within):
		t.Fatalf("daemon still running after %v:\n%s", within, d.stderr)
	}
}

func (d *daemonProc) running() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// shortDir is a temp dir whose paths fit a socket address.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

type testConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, path string) *testConn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &testConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (tc *testConn) roundTrip(line string) map[string]json.RawMessage {
	tc.t.Helper()
	_ = tc.c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(tc.c, line+"\n"); err != nil {
		tc.t.Fatal(err)
	}
	got, err := tc.r.ReadString('\n')
	if err != nil {
		tc.t.Fatalf("after %s: %v", line, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		tc.t.Fatalf("%q: %v", got, err)
	}
	return m
}

func TestSocketPermissionsAndCleanShutdown(t *testing.T) {
	home := filepath.Join(shortDir(t), "home")
	d := startDaemon(t, "ZOT_HOME="+home, "ZOT_SOCKET=")
	d.waitListening(t)
	sock := filepath.Join(home, "daemon.sock")
	st, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a 0600 socket", st.Mode())
	}
	dst, err := os.Stat(home)
	if err != nil {
		t.Fatal(err)
	}
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", dst.Mode().Perm())
	}
	c := dial(t, sock)
	if m := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`); string(m["result"]) != "[1]" {
		t.Fatalf("echo: %v", m)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.waitExit(t, 20*time.Second)
	if d.err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", d.err, d.stderr)
	}
	if !strings.Contains(d.stderr.String(), "stopping hook") {
		t.Errorf("the stopping hook did not run:\n%s", d.stderr)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestExistingDirectoryIsMadePrivate(t *testing.T) {
	home := filepath.Join(shortDir(t), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "ZOT_HOME="+home, "ZOT_SOCKET=")
	d.waitListening(t)
	if st, _ := os.Stat(home); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", st.Mode().Perm())
	}
}

func TestTwoDaemonsOneEndpoint(t *testing.T) {
	sock := filepath.Join(shortDir(t), "d.sock")
	first := startDaemon(t, "ZOT_SOCKET="+sock)
	first.waitListening(t)
	second := startDaemon(t, "ZOT_SOCKET="+sock)
	second.waitExit(t, 20*time.Second)
	if second.err == nil {
		t.Fatalf("a second daemon started on the same endpoint:\n%s", second.stderr)
	}
	want := fmt.Sprintf("another zot daemon (pid %d) serves %s", first.cmd.Process.Pid, sock)
	if !strings.Contains(second.stderr.String(), want) {
		t.Errorf("second daemon's error %q does not say %q", second.stderr, want)
	}
	// The first one still serves, its socket untouched.
	c := dial(t, sock)
	if m := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[2]}`); string(m["result"]) != "[2]" {
		t.Fatalf("first daemon after the second's attempt: %v", m)
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	sock := filepath.Join(shortDir(t), "d.sock")
	// A daemon killed with SIGKILL leaves its socket; its lock dies with it.
	first := startDaemon(t, "ZOT_SOCKET="+sock)
	first.waitListening(t)
	_ = first.cmd.Process.Kill()
	first.waitExit(t, 20*time.Second)
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("the killed daemon left no socket to test with: %v", err)
	}
	second := startDaemon(t, "ZOT_SOCKET="+sock)
	second.waitListening(t)
	if !strings.Contains(second.stderr.String(), "removed the stale socket") {
		t.Errorf("no word of the stale socket:\n%s", second.stderr)
	}
	c := dial(t, sock)
	if m := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[3]}`); string(m["result"]) != "[3]" {
		t.Fatalf("after replacing the stale socket: %v", m)
	}
	// A file that is not a socket is never removed.
	other := filepath.Join(filepath.Dir(sock), "plain.sock")
	if err := os.WriteFile(other, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := startDaemon(t, "ZOT_SOCKET="+other)
	third.waitExit(t, 20*time.Second)
	if b, _ := os.ReadFile(other); string(b) != "keep" || !strings.Contains(third.stderr.String(), "is not a socket") {
		t.Errorf("a plain file at the socket path: daemon said %q, file now %q", third.stderr, b)
	}
}

// runAsNobody runs the test binary as a client of uid 65534 and returns
// what it printed. The binary is copied where that user can run it.
func runAsNobody(t *testing.T, sock string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatalf("this test starts a client of another uid and needs root (uid %d)", os.Getuid())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := shortDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"ZOT_TEST_CLIENT=" + sock, "HOME=/"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPeerOfAnotherUIDRefused(t *testing.T) {
	dir := shortDir(t)
	sock := filepath.Join(dir, "run", "d.sock")
	d := startDaemon(t, "ZOT_SOCKET="+sock)
	d.waitListening(t)
	// The socket's permissions keep another user out first.
	if got := runAsNobody(t, sock); !strings.Contains(got, "permission denied") {
		t.Errorf("nobody through a 0600 socket in a 0700 directory: %q, want permission denied", got)
	}
	// Were they opened by mistake, SO_PEERCRED still refuses the client.
	for _, p := range []string{dir, filepath.Dir(sock)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	if got := runAsNobody(t, sock); got != "closed" {
		t.Errorf("nobody through an open socket: %q, want the daemon to hang up", got)
	}
	if !strings.Contains(d.stderr.String(), "refused a client of uid 65534 (pid ") {
		t.Errorf("the refusal is not logged with uid and pid:\n%s", d.stderr)
	}
	// The daemon's own user is still served.
	c := dial(t, sock)
	if m := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[4]}`); string(m["result"]) != "[4]" {
		t.Fatalf("own user after a refusal: %v", m)
	}
}

func TestEphemeral(t *testing.T) {
	sock := filepath.Join(shortDir(t), "d.sock")
	d := startDaemon(t, "ZOT_SOCKET="+sock, "ZOT_TEST_EPHEMERAL=1", "ZOT_TEST_GRACE=2s")
	d.waitListening(t)
	// Never before the first client came (grace 2 s: the exact times are
	// TestTrackerTiming's, on a fake clock; this checks the wiring).
	time.Sleep(2500 * time.Millisecond)
	if !d.running() {
		t.Fatalf("ephemeral daemon exited before any client came:\n%s", d.stderr)
	}
	// A client that leaves and another that comes at once: the second one
	// cancels the exit and is served past the grace time.
	a := dial(t, sock)
	a.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	b := dial(t, sock) // connected before a leaves: no gap at all
	a.c.Close()
	b.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	time.Sleep(2500 * time.Millisecond)
	if !d.running() {
		t.Fatalf("ephemeral daemon exited with a client connected:\n%s", d.stderr)
	}
	b.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"echo"}`)
	b.c.Close()
	// Reconnect right after the last client left: the exit is cancelled.
	c := dial(t, sock)
	c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"echo"}`)
	time.Sleep(2500 * time.Millisecond)
	if !d.running() {
		t.Fatalf("a reconnect did not cancel the exit:\n%s", d.stderr)
	}
	c.c.Close()
	d.waitExit(t, 20*time.Second)
	if d.err != nil {
		t.Fatalf("ephemeral exit: %v\n%s", d.err, d.stderr)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestSlowAndGarbageClientsDoNotAffectOthers(t *testing.T) {
	sock := filepath.Join(shortDir(t), "d.sock")
	d := startDaemon(t, "ZOT_SOCKET="+sock)
	d.waitListening(t)
	// slow asks for an endless stream and never reads.
	slow := dial(t, sock)
	if _, err := io.WriteString(slow.c, `{"jsonrpc":"2.0","id":1,"method":"flood"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	garbage := dial(t, sock)
	good := dial(t, sock)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, _ = io.WriteString(garbage.c, "\x00{{{ not json at all\n")
			}
		}()
		_ = i
	}
	for i := range 100 {
		m := good.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":[%d]}`, i, i))
		if string(m["result"]) != fmt.Sprintf("[%d]", i) || string(m["id"]) != fmt.Sprint(i) {
			t.Fatalf("good client, request %d: %v", i, m)
		}
	}
	wg.Wait()
	// The garbage client got one -32700 per line and is still served.
	_ = garbage.c.SetDeadline(time.Now().Add(20 * time.Second))
	for i := range 150 {
		line, err := garbage.r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"code":-32700`) || !strings.Contains(line, `"id":null`) {
			t.Fatalf("garbage line %d: %q %v", i, line, err)
		}
	}
	if m := garbage.roundTrip(`{"jsonrpc":"2.0","id":"x","method":"echo"}`); string(m["id"]) != `"x"` {
		t.Fatalf("garbage client after its garbage: %v", m)
	}
	// The slow client is let go once its queue stayed full (500 ms here).
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.stderr.String(), "client stopped reading") {
		if time.Now().After(deadline) {
			t.Fatalf("the client that never reads was not dropped:\n%s", d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
