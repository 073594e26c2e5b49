//go:build unix

package subproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hangGuard bounds every wait; it only catches hangs, it times nothing.
const hangGuard = 20 * time.Second

// Short graces keep the ladder tests fast.
const (
	shortGrace = 50 * time.Millisecond
	longGrace  = hangGuard
)

// helperEnv makes the test binary act as a process that starts a child
// through the package and then waits to be killed (see helperMain).
const helperEnv = "ZOT_SUBPROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

// helperMain starts `sleep 30` (kept on its parent's death with mode
// "keep"), churns OS threads, prints the child's pid and waits to be
// killed.
//
// The churn is a best-effort guard for the thread that starts the child:
// were it returned to the pool, one of the churning goroutines could take
// it and end it, and the parent-death signal would fire under a live
// parent. The main goroutine keeps the main thread, which the runtime never
// ends, so that the start and the churn run on threads that can end.
func helperMain(mode string) int {
	runtime.LockOSThread()
	var p *Process
	var err error
	var wg sync.WaitGroup
	wg.Go(func() {
		p, err = Start(context.Background(), Command{Path: "sleep", Args: []string{"30"}, KeepOnParentDeath: mode == "keep"})
	})
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for range 8 {
		for range 32 {
			// Exiting while locked ends the goroutine's thread.
			wg.Go(func() {
				runtime.LockOSThread()
				time.Sleep(time.Millisecond)
			})
		}
		wg.Wait()
	}
	fmt.Println(p.Pid())
	<-p.Done()
	return 3
}

// sh starts `sh -c script` with c's other fields and stops it when the
// test ends.
func sh(t *testing.T, script string, c Command) *Process {
	t.Helper()
	c.Path = "/bin/sh"
	c.Args = []string{"-c", script}
	p, err := Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Kill()
		<-p.Done()
	})
	return p
}

// stop runs Stop and fails the test if it hangs.
func stop(t *testing.T, ctx context.Context, p *Process) (esc Escalation, took time.Duration, err error) {
	t.Helper()
	type outcome struct {
		esc Escalation
		err error
	}
	start := time.Now()
	ch := make(chan outcome, 1)
	go func() {
		esc, err := p.Stop(ctx)
		ch <- outcome{esc, err}
	}()
	select {
	case o := <-ch:
		return o.esc, time.Since(start), o.err
	case <-time.After(hangGuard):
		t.Fatalf("Stop did not return within %v", hangGuard)
	}
	return 0, 0, nil
}

// readLine reads one line from the child's stdout.
func readLine(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's output: %v (got %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

// pidGone waits until pid no longer runs; a zombie counts as gone (it has
// exited and only awaits reaping by its new parent).
func pidGone(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		if !pidRunning(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// pidRunning reports whether pid exists and is not a zombie.
func pidRunning(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return false
		}
	}
	return true
}

func TestStopClosesStdin(t *testing.T) {
	p := sh(t, "cat >/dev/null; exit 0", Command{StdinPipe: true, StdinGrace: longGrace, TermGrace: longGrace})
	esc, took, err := stop(t, context.Background(), p)
	if esc != NotSignalled || err != nil {
		t.Errorf("Stop = %v, %v; want not signalled, nil", esc, err)
	}
	if took >= longGrace {
		t.Errorf("Stop took %v: it waited out the grace", took)
	}
	if p.ExitCode() != 0 {
		t.Errorf("exit code %d", p.ExitCode())
	}
}

func TestStopTerminates(t *testing.T) {
	// sleep does not read stdin, so closing it changes nothing.
	p := sh(t, "sleep 30", Command{StdinPipe: true, StdinGrace: shortGrace, TermGrace: longGrace})
	esc, took, err := stop(t, context.Background(), p)
	if esc != Terminated {
		t.Errorf("Stop escalated to %v, want terminated", esc)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Stop error %v, want death by SIGTERM", err)
	}
	if took >= longGrace {
		t.Errorf("Stop took %v", took)
	}
	if p.ExitCode() != -1 {
		t.Errorf("exit code %d after a signal", p.ExitCode())
	}
}

func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	p := sh(t, "trap '' TERM; echo ready; while :; do sleep 0.01; done", Command{
		StdinPipe: true, StdoutPipe: true, StdinGrace: shortGrace, TermGrace: shortGrace, WaitDelay: shortGrace,
	})
	readLine(t, bufio.NewReader(p.Stdout()))
	esc, _, err := stop(t, context.Background(), p)
	if esc != Killed {
		t.Errorf("Stop escalated to %v, want killed", esc)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Stop error %v, want death by SIGKILL", err)
	}
}

func TestStopWithoutStdinGoesToSIGTERM(t *testing.T) {
	p := sh(t, "sleep 30", Command{StdinGrace: longGrace, TermGrace: longGrace})
	if esc, took, _ := stop(t, context.Background(), p); esc != Terminated || took >= longGrace {
		t.Errorf("Stop = %v after %v, want terminated at once", esc, took)
	}
}

func TestStopCancelledKills(t *testing.T) {
	p := sh(t, "sleep 30", Command{StdinPipe: true, StdinGrace: longGrace, TermGrace: longGrace})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	esc, took, _ := stop(t, ctx, p)
	if esc != Killed || took >= longGrace {
		t.Errorf("Stop = %v after %v, want killed at once", esc, took)
	}
}

func TestStopKillsGrandchildren(t *testing.T) {
	// The grandchild ignores SIGTERM; the child does not, and exits. The
	// child says the grandchild's pid only once it obeys SIGTERM again
	// (said before, a Stop could reach it while it still ignored it).
	p := sh(t, "trap '' TERM; sleep 30 & g=$!; trap - TERM; echo $g; wait", Command{
		StdoutPipe: true, TermGrace: 200 * time.Millisecond, WaitDelay: shortGrace,
	})
	br := bufio.NewReader(p.Stdout())
	pid, err := strconv.Atoi(readLine(t, br))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !p.GroupAlive() {
		t.Error("GroupAlive is false while the group runs")
	}
	esc, _, _ := stop(t, context.Background(), p)
	if esc != Terminated {
		t.Errorf("Stop escalated to %v, want terminated (the child obeys SIGTERM)", esc)
	}
	if !pidGone(t, pid) {
		t.Fatalf("grandchild %d survived Stop", pid)
	}
	if p.GroupAlive() {
		t.Error("GroupAlive is true after Stop")
	}
}

func TestKillReachesTheGroup(t *testing.T) {
	p := sh(t, "sleep 30 & echo $!; wait", Command{StdoutPipe: true, WaitDelay: shortGrace})
	pid, err := strconv.Atoi(readLine(t, bufio.NewReader(p.Stdout())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != p.Pid() {
		t.Errorf("grandchild's group %d (%v), want %d", pgid, err, p.Pid())
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err == nil {
		t.Error("Wait after Kill: nil")
	}
	if !pidGone(t, pid) {
		t.Fatalf("grandchild %d survived Kill", pid)
	}
	if p.Escalation() != Killed {
		t.Errorf("escalation %v", p.Escalation())
	}
	if err := p.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
}

func TestStopTwiceAndWait(t *testing.T) {
	p := sh(t, "exec cat", Command{StdinPipe: true, StdinGrace: longGrace})
	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range 3 {
		wg.Go(func() {
			esc, err := p.Stop(context.Background())
			results[i] = fmt.Sprint(esc, err)
		})
	}
	wg.Go(func() { results[3] = fmt.Sprint(NotSignalled, p.Wait()) })
	wg.Wait()
	for _, r := range results {
		if r != "not signalled <nil>" {
			t.Errorf("results %q", results)
			break
		}
	}
	if esc, err := p.Stop(context.Background()); esc != NotSignalled || err != nil {
		t.Errorf("Stop after the end: %v, %v", esc, err)
	}
}

func TestSecondStopHonoursItsContext(t *testing.T) {
	p := sh(t, "trap '' TERM; echo ready; while :; do sleep 0.01; done", Command{
		StdinPipe: true, StdoutPipe: true, StdinGrace: longGrace, TermGrace: longGrace, WaitDelay: shortGrace,
	})
	readLine(t, bufio.NewReader(p.Stdout()))
	first := make(chan Escalation, 1)
	go func() {
		esc, _ := p.Stop(context.Background())
		first <- esc
	}()
	// Let the first call take the ladder, then end the second's context.
	for !p.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shortGrace)
	defer cancel()
	esc, took, _ := stop(t, ctx, p)
	if esc != Killed || took >= longGrace {
		t.Errorf("second Stop = %v after %v, want killed at its deadline", esc, took)
	}
	if esc := <-first; esc != Killed {
		t.Errorf("first Stop = %v", esc)
	}
}

func TestExitCodeAndStderr(t *testing.T) {
	var stderr strings.Builder
	var mu sync.Mutex
	p := sh(t, "echo out; echo err >&2; exit 7", Command{StdoutPipe: true, Stderr: lockedWriter{&mu, &stderr}})
	out, err := io.ReadAll(p.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := p.Wait(); !errors.As(err, &ee) || p.ExitCode() != 7 {
		t.Errorf("Wait = %v, exit code %d", err, p.ExitCode())
	}
	mu.Lock()
	defer mu.Unlock()
	if string(out) != "out\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", out, stderr.String())
	}
	if p.Pid() <= 0 || p.ProcessState() == nil {
		t.Errorf("pid %d, state %v", p.Pid(), p.ProcessState())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestGrandchildHoldingOutput(t *testing.T) {
	t.Run("stdout pipe", func(t *testing.T) {
		p := sh(t, "echo $$; sleep 30 &", Command{StdoutPipe: true, WaitDelay: shortGrace})
		start := time.Now()
		out, err := io.ReadAll(p.Stdout())
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("reading a held stdout: %q, %v; want it cut off", out, err)
		}
		if err := p.Wait(); err != nil {
			t.Errorf("Wait = %v", err)
		}
		if took := time.Since(start); took >= hangGuard/2 {
			t.Errorf("cut off after %v", took)
		}
	})
	t.Run("stderr writer", func(t *testing.T) {
		var mu sync.Mutex
		var b strings.Builder
		p := sh(t, "echo begun >&2; sleep 30 &", Command{Stderr: lockedWriter{&mu, &b}, WaitDelay: shortGrace})
		if err := p.Wait(); !errors.Is(err, exec.ErrWaitDelay) {
			t.Errorf("Wait = %v, want exec.ErrWaitDelay", err)
		}
		if !p.GroupAlive() {
			t.Error("the background sleep is not seen in the group")
		}
		mu.Lock()
		defer mu.Unlock()
		if b.String() != "begun\n" {
			t.Errorf("stderr %q", b.String())
		}
	})
}

func TestMissingExecutable(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		dir  string
		is   error
	}{
		{path: filepath.Join(dir, "missing"), is: fs.ErrNotExist},
		{path: "zot-subproc-no-such-command", is: exec.ErrNotFound},
		{path: plain, is: fs.ErrPermission},
		{path: "./plain", dir: dir, is: fs.ErrPermission},
		{path: dir},
	} {
		_, err := Start(context.Background(), Command{Path: tc.path, Dir: tc.dir})
		if err == nil {
			t.Errorf("starting %s: no error", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Quote(tc.path)) || strings.Count(err.Error(), tc.path) != 1 {
			t.Errorf("error %q does not name %s once", err, tc.path)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("error %q is not %v", err, tc.is)
		}
		t.Logf("%s: %v", tc.path, err)
	}
	if _, err := Start(context.Background(), Command{}); err == nil {
		t.Error("no path: no error")
	}
}

func TestStartCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Command{Path: "/bin/sh"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context: %v", err)
	}
}

func TestStdioConflicts(t *testing.T) {
	if _, err := Start(context.Background(), Command{Path: "/bin/sh", StdinPipe: true, Stdin: strings.NewReader("")}); err == nil {
		t.Error("Stdin and StdinPipe: no error")
	}
	if _, err := Start(context.Background(), Command{Path: "/bin/sh", StdoutPipe: true, Stdout: io.Discard}); err == nil {
		t.Error("Stdout and StdoutPipe: no error")
	}
}

func TestParentDeathKillsChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	for _, mode := range []string{"default", "keep"} {
		t.Run(mode, func(t *testing.T) {
			helper := exec.Command(os.Args[0], "-test.run=^$")
			helper.Env = append(os.Environ(), helperEnv+"="+mode)
			helper.Stderr = os.Stderr
			out, err := helper.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = helper.Process.Kill()
				_ = helper.Wait()
			})
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("helper: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if !pidRunning(pid) {
				t.Fatalf("child %d died under a live parent (its starting thread ended)", pid)
			}
			if err := helper.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()
			if mode == "keep" {
				time.Sleep(100 * time.Millisecond)
				if !pidRunning(pid) {
					t.Errorf("child %d died with its parent despite KeepOnParentDeath", pid)
				}
				return
			}
			if !pidGone(t, pid) {
				t.Errorf("child %d outlived its killed parent", pid)
			}
		})
	}
}

func TestEscalationString(t *testing.T) {
	for e, want := range map[Escalation]string{NotSignalled: "not signalled", Terminated: "terminated", Killed: "killed", 7: "Escalation(7)"} {
		if e.String() != want {
			t.Errorf("%d: %q", e, e.String())
		}
	}
}
