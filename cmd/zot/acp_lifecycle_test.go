package main

// Tests of how sessions open and close when several clients (or several
// processes) reach for one session at once, through the real binary.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// storedSession makes a session with one answered prompt on a daemon at
// sock and leaves it stored (its connection closed); it returns its id.
func storedSession(t *testing.T, sock, cwd string) string {
	t.Helper()
	conn, c := dialDoor(t, sock)
	p := checked(t, conn)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd), "")))
	if f, _ := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id), ""); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	c.Close()
	return id
}

// initialized dials sock and initializes a connection.
func initialized(t *testing.T, sock string) *acpPeer {
	t.Helper()
	conn, _ := dialDoor(t, sock)
	p := checked(t, conn)
	if f, _ := p.call("0", "initialize", `{"protocolVersion":1}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	return p
}

// Several clients loading one stored session at the same moment all join
// it: none is told that another process holds the file.
func TestACPDaemonConcurrentLoadsOfOneSession(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "s")
	work := t.TempDir()
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock), "--script", writeScript(t, dir, 1, 4, 0))
	d.waitFor(t, "listening on")
	for round := range 6 {
		id := storedSession(t, sock, work)
		peers := make([]*acpPeer, 8)
		for i := range peers {
			peers[i] = initialized(t, sock)
		}
		load := fmt.Sprintf(`{"jsonrpc":"2.0","id":"l","method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, id, work)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, p := range peers {
			wg.Add(1)
			go func() { defer wg.Done(); <-start; p.send(load) }()
		}
		close(start)
		wg.Wait()
		for i, p := range peers {
			if f, _ := p.await(`"l"`, ""); f.Error != nil {
				t.Errorf("round %d: load %d of 8 at once: %s", round, i, f.raw)
			}
		}
		// The session is open and runs prompts.
		if f, _ := peers[0].call(`"p"`, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}`, id), ""); f.Error != nil {
			t.Errorf("round %d: prompt after the loads: %s", round, f.raw)
		}
	}
}

// A client loading a session while another client closes it (its last
// one) gets the session, open and usable, never a closed one or a lock
// error.
func TestACPDaemonLoadWhileAnotherClientClosesIt(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "s")
	work := t.TempDir()
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock), "--script", writeScript(t, dir, 1, 4, 0))
	d.waitFor(t, "listening on")
	id := storedSession(t, sock, work)
	a, b := initialized(t, sock), initialized(t, sock)
	load := fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, work)
	closeIt := fmt.Sprintf(`{"sessionId":%q}`, id)
	prompt := fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}`, id)
	if f, _ := a.call(`"a0"`, "session/load", load, ""); f.Error != nil {
		t.Fatalf("load: %s", f.raw)
	}
	for i := range 40 {
		a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"session/close","params":%s}`, i, closeIt))
		f, _ := b.call(fmt.Sprintf(`"l%d"`, i), "session/load", load, "")
		if f.Error != nil {
			t.Fatalf("load %d while the other client closes it: %s", i, f.raw)
		}
		if f, _ := a.await(fmt.Sprintf(`"c%d"`, i), ""); f.Error != nil {
			t.Fatalf("close %d: %s", i, f.raw)
		}
		if f, _ := b.call(fmt.Sprintf(`"p%d"`, i), "session/prompt", prompt, ""); f.Error != nil {
			t.Fatalf("prompt %d after the load: %s", i, f.raw)
		}
		a, b = b, a
	}
}

// A client that reconnects while the turn it left runs, and tries to
// load the session, is told busy; the turn it left still runs to its
// end into the file.
func TestACPDaemonBusyLoadLeavesTheOrphanTurnRunning(t *testing.T) {
	dir := doorDir(t)
	sock := filepath.Join(dir, "s")
	work := t.TempDir()
	answer := strings.Repeat("a slow answer ", 12)
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": answer, "chunk": 4, "delay_ms": 20}}}}})
	d := startZotDaemon(t, doorEnv(filepath.Join(dir, "home"), "ZOT_SOCKET="+sock), "--script", s)
	d.waitFor(t, "listening on")
	p := initialized(t, sock)
	id := sessionID(t, first(p.call("1", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	for f := p.next(); !strings.Contains(string(f.Params), "agent_message_chunk"); f = p.next() {
	}
	p.w.(interface{ Close() error }).Close() // the editor goes away mid-turn

	q := initialized(t, sock)
	load := fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, work)
	f, _ := q.call("1", "session/load", load, "")
	if f.Error == nil || f.Error.Data["kind"] != "busy" {
		t.Fatalf("load during the orphan turn: %s, want busy", f.raw)
	}
	deadline := time.Now().Add(hangGuard)
	for n := 2; ; n++ {
		f, before := q.call(fmt.Sprint(n), "session/load", load, "")
		if f.Error == nil {
			if got := chunkText(before, "agent_message_chunk"); got != answer {
				t.Fatalf("the orphan turn's answer in the file is %q, want %q", got, answer)
			}
			return
		}
		if f.Error.Data["kind"] != "busy" || time.Now().After(deadline) {
			t.Fatalf("load: %s", f.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// session/delete of a session another process holds (a second daemon on
// the same zot home) is refused as session_locked and removes nothing;
// once that process lets go, it deletes.
func TestACPDaemonDeleteRefusedWhileAnotherProcessHoldsIt(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	work := t.TempDir()
	s := writeScript(t, dir, 1, 4, 0)
	sock1, sock2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	d1 := startZotDaemon(t, doorEnv(home, "ZOT_SOCKET="+sock1), "--script", s)
	d2 := startZotDaemon(t, doorEnv(home, "ZOT_SOCKET="+sock2), "--script", s)
	d1.waitFor(t, "listening on")
	d2.waitFor(t, "listening on")
	p1, p2 := initialized(t, sock1), initialized(t, sock2)
	id := sessionID(t, first(p1.call("1", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	file := filepath.Join(home, "sessions", id+".jsonl")

	f, _ := p2.call("1", "session/delete", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	if f.Error == nil || f.Error.Data["kind"] != "session_locked" {
		t.Fatalf("delete of a session another daemon holds: %s, want session_locked", f.raw)
	}
	if f, _ := p1.call("2", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"kept"}]}`, id), ""); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "kept") {
		t.Fatalf("the session file after the refused delete: %v\n%s", err, b)
	}

	p1.call("3", "session/close", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	deadline := time.Now().Add(hangGuard)
	for n := 2; ; n++ {
		f, _ := p2.call(fmt.Sprint(n), "session/delete", fmt.Sprintf(`{"sessionId":%q}`, id), "")
		if f.Error == nil {
			break
		}
		if f.Error.Data["kind"] != "session_locked" || time.Now().After(deadline) {
			t.Fatalf("delete once the other daemon closed it: %s", f.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the session file is still there: %v", err)
	}
}

// An ephemeral daemon whose last client left mid-turn lets the turn run
// to its end into the file before it exits.
func TestACPDaemonEphemeralLetsTheOrphanTurnEnd(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "s")
	work := t.TempDir()
	// About 2 s of streaming: longer than the 1 s grace.
	answer := strings.Repeat("a slow answer ", 12)
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": answer, "chunk": 4, "delay_ms": 50}}}}})
	env := doorEnv(home, "ZOT_SOCKET="+sock)
	d := startZotDaemon(t, env, "--script", s, "--ephemeral")
	d.waitFor(t, "listening on")
	conn, c := dialDoor(t, sock)
	p := checked(t, conn)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	for f := p.next(); !strings.Contains(string(f.Params), "agent_message_chunk"); f = p.next() {
	}
	c.Close()
	d.waitExit(t)
	if d.err != nil {
		t.Fatalf("ephemeral exit: %v\n%s", d.err, d.stderr)
	}

	d2 := startZotDaemon(t, env, "--script", s)
	d2.waitFor(t, "listening on")
	q := initialized(t, sock)
	f, before := q.call("1", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, work), "")
	if f.Error != nil {
		t.Fatalf("load: %s", f.raw)
	}
	if got := chunkText(before, "agent_message_chunk"); got != answer {
		t.Errorf("the turn left by its client ended as %q, want %q", got, answer)
	}
}
