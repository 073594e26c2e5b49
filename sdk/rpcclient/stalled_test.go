package rpcclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zotPid returns the pid of the zot process this test started (the one
// child of the test process named zot).
func zotPid(t *testing.T) int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, m := range stats {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 || !strings.HasSuffix(s[:end], "(zot") {
			continue
		}
		f := strings.Fields(s[end+1:])
		if ppid, _ := strconv.Atoi(f[1]); ppid == os.Getpid() {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(m)))
			return pid
		}
	}
	t.Skip("no /proc entry for the zot child")
	return 0
}

// TestPromptGivesUpWhenZotStopsReading: while zot reads none of its input
// (stopped), a Prompt whose line does not fit the pipe returns when its
// context ends instead of blocking in the write; once zot reads again the
// line goes whole and the client keeps working.
func TestPromptGivesUpWhenZotStopsReading(t *testing.T) {
	c := startZot(t, nil)
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	pid := zotPid(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)

	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := c.Prompt(short, strings.Repeat("x", 256<<10), nil)
		ended <- err
	}()
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Prompt to a zot that reads nothing: %v, want its context's deadline", err)
		}
	case <-time.After(hangGuard):
		resume()
		t.Fatal("Prompt blocked past its context while zot read nothing")
	}
	// A second command waits its turn behind the first line, and gives
	// up with its own context too.
	short2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if err := c.Ping(short2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ping behind the unwritten line: %v", err)
	}
	resume()
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatalf("after zot reads again: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
