package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// needLandlock skips a test where the kernel enforces nothing.
func needLandlock(t *testing.T) {
	t.Helper()
	if Probe().Backend != BackendLandlock {
		t.Skipf("no Landlock here (%s)", Probe())
	}
}

// run runs script under p with sh, as the user cred names (nil: zot's),
// and returns its output and whether it exited 0.
func run(t *testing.T, p Policy, cred *syscall.Credential, script string) (string, bool) {
	t.Helper()
	return runWith(t, NewGuard(p), p.Workspace, cred, script)
}

// runWith runs script under g's policy.
func runWith(t *testing.T, g *Guard, dir string, cred *syscall.Credential, script string) (string, bool) {
	t.Helper()
	prog, args, confine, err := g.Prepare("/bin/sh", []string{"-c", script})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &out
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := startConfined(cmd, confine); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), err == nil
}

// startConfined starts cmd on a thread confine restricts, which ends
// after (as subproc.Start does it).
func startConfined(cmd *exec.Cmd, confine func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends here
		if confine != nil {
			if err := confine(); err != nil {
				errc <- err
				return
			}
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// users are the users the tests run commands as: zot's own, and nobody
// when zot runs as root (the sandbox holds for both).
func users(t *testing.T) map[string]*syscall.Credential {
	u := map[string]*syscall.Credential{"self": nil}
	if os.Getuid() == 0 {
		u["nobody"] = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	return u
}

// shared returns a folder every user may write.
func shared(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zot-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	return dir
}

func TestWorkspaceWriteConfinesWrites(t *testing.T) {
	needLandlock(t)
	base := shared(t)
	for name, cred := range users(t) {
		t.Run(name, func(t *testing.T) {
			ws := filepath.Join(base, name, "ws")
			outside := filepath.Join(base, name, "outside")
			for _, d := range []string{ws, outside} {
				if err := os.MkdirAll(d, 0o777); err != nil {
					t.Fatal(err)
				}
				os.Chmod(d, 0o777)
				os.Chmod(filepath.Dir(d), 0o777)
			}
			if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
				t.Fatal(err)
			}
			p := Policy{Mode: WorkspaceWrite, Workspace: ws}
			if out, ok := run(t, p, cred, "echo hi > inside && mkdir d && echo x > d/f && rm d/f && echo ok"); !ok || !strings.Contains(out, "ok") {
				t.Fatalf("a write inside the workspace failed: %s", out)
			}
			for _, script := range []string{
				"echo x > " + ws + "/../outside/a",
				"echo x > out/b",
				"cd " + outside + " && touch c",
				"ln -s /etc/passwd " + outside + "/d",
				"mv inside " + outside + "/e",
				"python3 -c 'open(\"" + outside + "/f\", \"w\").write(\"x\")'",
			} {
				out, ok := run(t, p, cred, script)
				if ok {
					t.Errorf("%s: ran: %s", script, out)
				}
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 0 {
				t.Errorf("the commands wrote outside the workspace: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(ws, "inside")); err != nil {
				t.Errorf("the file moved out: %v", err)
			}
			if out, ok := run(t, p, cred, "echo x > /dev/null && echo ok"); !ok {
				t.Errorf("writing to /dev/null failed: %s", out)
			}
		})
	}
}

func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	needLandlock(t)
	base := shared(t)
	ws := filepath.Join(base, "ws")
	os.MkdirAll(ws, 0o777)
	os.WriteFile(filepath.Join(ws, "f"), []byte("keep"), 0o666)
	p := Policy{Mode: ReadOnly, Workspace: ws, Writable: []string{os.TempDir()}}
	for name, cred := range users(t) {
		for _, script := range []string{"echo x > new", "echo x >> f", ": > f", "rm f", "mkdir d", "ln -s f g", "touch " + os.TempDir() + "/zot-ro-test", "mkfifo p"} {
			if out, ok := run(t, p, cred, script); ok {
				t.Errorf("%s: %s ran: %s", name, script, out)
			}
		}
		if out, ok := run(t, p, cred, "cat f"); !ok || out != "keep" {
			t.Errorf("%s: reading failed: %q", name, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f")); string(b) != "keep" {
		t.Errorf("the file changed: %q", b)
	}
}

func TestNetworkOff(t *testing.T) {
	needLandlock(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	base := shared(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	tcp := "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " + itoa(port) + ")); print(\"connected\")'"
	udp := "python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"127.0.0.1\", 9)); print(\"sent\")'"
	unixSock := "python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(\"unix\")'"
	for name, cred := range users(t) {
		off := Policy{Mode: WorkspaceWrite, Workspace: base}
		for _, script := range []string{tcp, udp} {
			if out, ok := run(t, off, cred, script); ok {
				t.Errorf("%s: network off, but %s", name, out)
			}
		}
		if out, ok := run(t, off, cred, unixSock); !ok {
			t.Errorf("%s: a Unix socket failed: %s", name, out)
		}
		on := off
		on.Network = true
		if out, ok := run(t, on, cred, tcp); !ok || !strings.Contains(out, "connected") {
			t.Errorf("%s: network on, but %s", name, out)
		}
	}
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestFullWrapsNothing(t *testing.T) {
	prog, args, confine, err := NewGuard(Policy{Mode: Full, Network: true}).Prepare("/bin/sh", []string{"-c", "true"})
	if err != nil || prog != "/bin/sh" || len(args) != 2 || confine != nil {
		t.Fatalf("got %s %v %v", prog, args, err)
	}
}

// TestPolicyChangeTakesEffect: a guard whose policy changes starts the
// next command under the new one, and Close refuses later commands.
func TestPolicyChangeTakesEffect(t *testing.T) {
	needLandlock(t)
	ws := shared(t)
	g := NewGuard(Policy{Mode: ReadOnly, Workspace: ws})
	if _, ok := runWith(t, g, ws, nil, "touch a"); ok {
		t.Fatal("read-only let a write through")
	}
	g.Set(Policy{Mode: WorkspaceWrite, Workspace: ws})
	if out, ok := runWith(t, g, ws, nil, "touch a"); !ok {
		t.Fatalf("workspace-write refused: %s", out)
	}
	if _, ok := runWith(t, g, ws, nil, "touch "+filepath.Dir(ws)+"/zot-sandbox-outside"); ok {
		os.Remove(filepath.Dir(ws) + "/zot-sandbox-outside")
		t.Fatal("workspace-write let a write outside through")
	}
}

func TestCheckWrite(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "out"))
	os.Symlink(filepath.Join(outside, "new"), filepath.Join(ws, "dangling"))
	os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "hard"))
	os.WriteFile(filepath.Join(ws, "own"), []byte("x"), 0o644)
	p := Policy{Mode: WorkspaceWrite, Workspace: ws}
	for path, allowed := range map[string]bool{
		filepath.Join(ws, "own"):               true,
		filepath.Join(ws, "sub/new/file"):      true,
		filepath.Join(ws, "../outside/x"):      false,
		filepath.Join(ws, "out/secret"):        false,
		filepath.Join(ws, "out/sub/new"):       false,
		filepath.Join(ws, "dangling"):          false,
		filepath.Join(ws, "hard"):              false,
		filepath.Join(outside, "secret"):       false,
		"/etc/zot-sandbox-test":                false,
		filepath.Join(ws, "out") + "/../ws/ok": false, // out/.. is outside's parent: base/ws/ok? resolved below
	} {
		err := p.CheckWrite(path)
		if path == filepath.Join(ws, "out")+"/../ws/ok" {
			// filepath.Join cleaned it to base/ws/ok: inside.
			allowed = true
		}
		if (err == nil) != allowed {
			t.Errorf("%s: allowed %v, want %v (%v)", path, err == nil, allowed, err)
		}
		var d *Denied
		if err != nil && (!errors.As(err, &d) || !strings.Contains(err.Error(), "sandbox (workspace-write)")) {
			t.Errorf("%s: %v is not a *Denied", path, err)
		}
	}
	ro := Policy{Mode: ReadOnly, Workspace: ws}
	if err := ro.CheckWrite(filepath.Join(ws, "own")); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only allowed a write: %v", err)
	}
	if err := (Policy{Mode: Full}).CheckWrite("/etc/x"); err != nil {
		t.Errorf("full refused: %v", err)
	}
}

// TestBubblewrap: where Landlock is missing, bubblewrap enforces the same
// policy: writes outside the workspace fail, the network is a namespace
// of its own.
func TestBubblewrap(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed")
	}
	base := shared(t)
	ws := filepath.Join(base, "ws")
	os.MkdirAll(ws, 0o777)
	os.Chmod(ws, 0o777)
	p := Policy{Mode: WorkspaceWrite, Workspace: ws}
	prog, args, confine, err := prepareWith(p, Support{Backend: BackendBwrap, Bwrap: bwrap}, "/bin/sh", []string{"-c", "echo x > inside && echo ok; echo x > " + base + "/outside; true"})
	if err != nil || confine != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "No permissions") || strings.Contains(string(out), "Operation not permitted") {
			t.Skipf("bubblewrap cannot run here: %s", out)
		}
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "ok") {
		t.Errorf("a write inside failed: %s", out)
	}
	if _, err := os.Stat(filepath.Join(base, "outside")); err == nil {
		t.Errorf("bubblewrap let a write outside through: %s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside")); err != nil {
		t.Errorf("the write inside is not there: %v", err)
	}
}

// TestDescribe: what the model reads of each policy names what commands
// may write, the network, and what enforces it, or that nothing can.
func TestDescribe(t *testing.T) {
	ws := t.TempDir()
	ll := Support{LandlockABI: 6, Seccomp: true, Backend: BackendLandlock}
	for _, c := range []struct {
		p    Policy
		s    Support
		want []string
		not  []string
	}{
		{Policy{Mode: WorkspaceWrite, Workspace: ws}, ll, []string{"may write files only under " + ws, "network is off", "(landlock)", "/unjail"}, []string{"not sandboxed", "refuses"}},
		{Policy{Mode: ReadOnly, Network: true}, ll, []string{"may write no file anywhere", "may reach the network"}, []string{"network is off"}},
		{Policy{Mode: Full}, ll, []string{"may write whatever zot's user may", "network is off"}, nil},
		{Policy{Mode: Full, Network: true}, ll, []string{"not sandboxed"}, []string{"landlock"}},
		{Policy{Mode: WorkspaceWrite, Workspace: ws}, Support{Backend: BackendNone}, []string{"cannot enforce it", "--sandbox off"}, []string{"(landlock)"}},
	} {
		got := c.p.describe(c.s)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s, network %v, %s: %q lacks %q", c.p.Mode, c.p.Network, c.s.Backend, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s, network %v, %s: %q says %q", c.p.Mode, c.p.Network, c.s.Backend, got, n)
			}
		}
	}
}

// TestBeneath: where a confined write is placed: beneath the workspace
// for a path in it, in its own folder (written in place if need be) for
// a path allowed once or always, refused for a path that leads outside
// (a link swapped in after the check), and nowhere in particular when
// writes are not confined.
func TestBeneath(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	os.MkdirAll(filepath.Join(ws, "a"), 0o755)
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(ws, "linked"), []byte("x"), 0o644)
	os.Link(filepath.Join(ws, "linked"), filepath.Join(ws, "linked2"))
	os.Symlink(out, filepath.Join(ws, "swapped"))
	g := NewGuard(Policy{Mode: WorkspaceWrite, Workspace: ws})
	check := func(path, grant, wantRoot, wantRel string, wantOwn, wantErr bool) {
		t.Helper()
		root, rel, own, err := g.Beneath(path, grant)
		if root != wantRoot || rel != wantRel || own != wantOwn || (err != nil) != wantErr {
			t.Errorf("Beneath(%s, %q) = %q %q %v %v; want %q %q %v, error %v", path, grant, root, rel, own, err, wantRoot, wantRel, wantOwn, wantErr)
		}
	}
	checkWrite := func(path string) string {
		t.Helper()
		grant, err := g.CheckWrite(path)
		if err != nil {
			t.Fatal(err)
		}
		return grant
	}
	check(filepath.Join(ws, "a/b/new"), "", ws, "a/b/new", false, false)
	check(filepath.Join(ws, "swapped/f"), "", "", "", false, true)
	check(filepath.Join(out, "f"), "", "", "", false, true)

	// Allowed once: CheckWrite lets it through with a grant for it,
	// which places that write, and no other.
	g.AllowOnce(filepath.Join(out, "f"))
	grant := checkWrite(filepath.Join(ws, "swapped/f"))
	if grant != filepath.Join(out, "f") {
		t.Errorf("grant %q", grant)
	}
	check(filepath.Join(ws, "swapped/f"), grant, out, "f", true, false)
	check(filepath.Join(ws, "swapped/f"), "", "", "", false, true)
	if _, err := g.CheckWrite(filepath.Join(ws, "swapped/f")); err == nil {
		t.Error("allowed once, allowed twice")
	}
	// A grant whose write was never made is gone with its call: a later
	// write in the workspace whose path was swapped to a link to that
	// file since its check is refused, not written in place outside.
	g.AllowOnce(filepath.Join(out, "f"))
	checkWrite(filepath.Join(out, "f"))
	later := filepath.Join(ws, "later")
	if grant := checkWrite(later); grant != "" {
		t.Errorf("a write the policy allows has a grant %q", grant)
	}
	os.Symlink(filepath.Join(out, "f"), later)
	check(later, "", "", "", false, true)
	// A grant leads only to the file it was given for.
	check(later, filepath.Join(ws, "a"), "", "", false, true)
	// A file with hard links inside, allowed once, then always.
	g.AllowOnce(filepath.Join(ws, "linked"))
	grant = checkWrite(filepath.Join(ws, "linked"))
	check(filepath.Join(ws, "linked"), grant, ws, "linked", true, false)
	check(filepath.Join(ws, "linked"), "", ws, "linked", false, false)
	g.Allow(filepath.Join(ws, "linked"))
	check(filepath.Join(ws, "linked"), "", ws, "linked", true, false)

	g.Set(Policy{Mode: Full, Network: true, Workspace: ws})
	check(filepath.Join(out, "f"), "", "", "", false, false)
}

// TestOnChange: every function OnChange was given is called after each
// change (a path allowed again is no change), until it is removed.
func TestOnChange(t *testing.T) {
	g := NewGuard(Policy{Mode: WorkspaceWrite, Workspace: t.TempDir()})
	var a, b int
	g.OnChange(func() { a++ })
	removeB := g.OnChange(func() { b++ })
	g.Set(Policy{Mode: ReadOnly})
	g.Allow("/srv/x")
	g.Allow("/srv/x")
	removeB()
	g.Set(Policy{Mode: Full, Network: true})
	if a != 3 || b != 2 {
		t.Errorf("called %d and %d times, want 3 and 2", a, b)
	}
}
