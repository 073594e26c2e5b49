package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// escape is a fleet whose model calls one tool (name, args) and then
// answers, keeping what the tool said; the workers and daemons get a
// temporary directory of their own, so that outside (beside the working
// directories) is writable under no workspace-write sandbox, and a
// loopback listener counts the connections a command makes to it.
type escape struct {
	*fleetSetup
	outside  string
	listener net.Listener
	accepted atomic.Int32

	mu     sync.Mutex
	result string // the tool's result, as the model read it
}

func newEscape(t *testing.T, tool func(e *escape) (string, string)) *escape {
	t.Helper()
	e := &escape{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	e.listener = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.accepted.Add(1)
			c.Close()
		}
	}()
	e.fleetSetup = newFleet(t, func(r modelRequest) []answerPart {
		if r.Results == 0 {
			name, args := tool(e)
			return []answerPart{{Tool: name, Args: args}}
		}
		e.mu.Lock()
		e.result = r.LastResult
		e.mu.Unlock()
		return []answerPart{{Text: "That is what happened."}}
	})
	tmp := filepath.Join(e.dir, "tmp")
	e.outside = filepath.Join(e.dir, "outside")
	for _, d := range []string{tmp, e.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.env = []string{"TMPDIR=" + tmp}
	return e
}

// bashEscape is a bash call that writes in the working directory, then
// outside it, then connects to the listener.
func bashEscape(e *escape) (string, string) {
	addr := e.listener.Addr().(*net.TCPAddr)
	cmd := fmt.Sprintf("echo in > inside.txt; echo out > %s/out.txt; (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo CONNECTED || echo NOT-CONNECTED",
		e.outside, addr.Port)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return "bash", string(args)
}

// turn runs one prompt in a fresh working directory of a session of the
// daemon at sock, and returns the directory.
func (e *escape) turn(c *acpClient, name string) string {
	e.t.Helper()
	work := filepath.Join(e.dir, name)
	if err := os.MkdirAll(work, 0o700); err != nil {
		e.t.Fatal(err)
	}
	s := c.newSession(work)
	if res := c.prompt(s, "try it"); !strings.Contains(string(res), `"end_turn"`) {
		e.t.Fatalf("%s: prompt answered %s", name, res)
	}
	return work
}

func (e *escape) toolResult() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.result
}

// checkConfined fails unless the bash call of bashEscape wrote inside
// work only and reached nothing.
func (e *escape) checkConfined(t *testing.T, work string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(work, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("the write in the working directory: %q, %v; want it made", b, err)
	}
	if _, err := os.Stat(filepath.Join(e.outside, "out.txt")); err == nil {
		t.Errorf("the command wrote outside the working directory")
	}
	res := e.toolResult()
	if !strings.Contains(res, "NOT-CONNECTED") || e.accepted.Load() != 0 {
		t.Errorf("the connection: %d accepted; the tool said %s", e.accepted.Load(), res)
	}
	if !strings.Contains(res, "Permission denied") {
		t.Errorf("the tool's result does not say the write was refused: %s", res)
	}
}

// TestFleetSandboxOfTheSession: a session of zot daemon --sandbox
// workspace-write runs its bash call on a worker started with no sandbox
// of its own, confined as in the daemon: the write outside the working
// directory fails, and with the network off the connection is never made.
func TestFleetSandboxOfTheSession(t *testing.T) {
	e := newEscape(t, bashEscape)
	e.worker("w1")
	_, sock := e.daemonAs("d", false, "allow", "--sandbox", "workspace-write")
	e.checkConfined(t, e.turn(dialACP(t, sock), "work"))
}

// TestFleetSandboxWorkerFloor: a worker started with --sandbox
// workspace-write confines a session whose own sandbox is full: the
// worker's flag is the least confinement its calls get.
func TestFleetSandboxWorkerFloor(t *testing.T) {
	e := newEscape(t, bashEscape)
	e.worker("w1", "--sandbox", "workspace-write", "--network", "off")
	_, sock := e.daemonAs("d", false, "allow", "--sandbox", "full")
	e.checkConfined(t, e.turn(dialACP(t, sock), "work"))
}

// TestFleetSandboxApproval: with --permission ask, a write outside the
// session's sandbox is asked about in the daemon, as in process: allowed
// once, the worker writes that file; rejected, it writes nothing. A
// worker whose own --sandbox refuses the path never writes it, whatever
// the session allowed.
func TestFleetSandboxApproval(t *testing.T) {
	e := newEscape(t, func(e *escape) (string, string) {
		args, _ := json.Marshal(map[string]string{"path": filepath.Join(e.outside, "note.txt"), "content": "allowed\n"})
		return "write", string(args)
	})
	w := e.worker("w1")
	_, sock := e.daemonAs("d", false, "ask", "--sandbox", "workspace-write")
	target := filepath.Join(e.outside, "note.txt")
	for _, reject := range []bool{true, false} {
		c := dialACP(t, sock)
		c.reject = reject
		e.turn(c, fmt.Sprintf("work-%v", reject))
		b, err := os.ReadFile(target)
		switch {
		case c.asked != 1:
			t.Errorf("reject=%v: asked %d times, want once", reject, c.asked)
		case reject && err == nil:
			t.Errorf("rejected, the file was written: %q", b)
		case !reject && string(b) != "allowed\n":
			t.Errorf("allowed once, the file holds %q (%v); the tool said %s", b, err, e.toolResult())
		}
	}
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	w.kill()
	e.worker("w2", "--sandbox", "workspace-write")
	c := dialACP(t, sock)
	e.turn(c, "work-floor")
	if _, err := os.Stat(target); err == nil || c.asked != 1 {
		t.Errorf("a worker whose --sandbox refuses the path: asked %d times, written: %v", c.asked, err == nil)
	}
	if res := e.toolResult(); !strings.Contains(res, "sandbox (workspace-write)") {
		t.Errorf("the refused write's result: %s", res)
	}
}

// TestFleetSandboxChangesMidTurn: the session's sandbox as it stands
// when each call is let through is the one the worker applies, not the
// one the turn began with: a write outside allowed always (its path
// added to the session's writable paths) lets the turn's next call, a
// bash command, append to that file on the worker.
func TestFleetSandboxChangesMidTurn(t *testing.T) {
	outside := t.TempDir()
	f := newFleet(t, func(r modelRequest) []answerPart {
		note := filepath.Join(outside, "note.txt")
		switch r.Results {
		case 0:
			args, _ := json.Marshal(map[string]string{"path": note, "content": "allowed\n"})
			return []answerPart{{Tool: "write", Args: string(args)}}
		case 1:
			args, _ := json.Marshal(map[string]string{"command": "echo more >> " + note})
			return []answerPart{{Tool: "bash", Args: string(args)}}
		}
		return []answerPart{{Text: "Both done."}}
	})
	tmp := filepath.Join(f.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	f.env = []string{"TMPDIR=" + tmp}
	f.worker("w1")
	_, sock := f.daemonAs("d", false, "ask", "--sandbox", "workspace-write")
	c := dialACP(t, sock)
	c.always = true
	work := filepath.Join(f.dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	s := c.newSession(work)
	if res := c.prompt(s, "write it, then add to it"); !strings.Contains(string(res), `"end_turn"`) {
		t.Fatalf("prompt answered %s", res)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "note.txt")); string(b) != "allowed\nmore\n" {
		t.Errorf("the file outside holds %q (%v); want the write's line, then the command's", b, err)
	}
}
