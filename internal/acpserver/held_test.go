package acpserver

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/acp"
)

// The updates a session has for everyone while a client opens it are
// held for that client until its answer is queued, then follow it in
// order; past maxHeld they are dropped for it (and logged), so a client
// whose answer never comes costs a bounded amount. The client that has
// the session open already gets every update at once.
func TestUpdatesHeldUntilTheAnswerAreBounded(t *testing.T) {
	ta := newTestAgent(t, "", writeScript, PermissionAsk)
	first := ta.connect()
	first.init()
	id := first.newSession(t.TempDir())
	s := ta.a.lookup(id)
	if s == nil {
		t.Fatal("no session")
	}
	second := ta.connect()
	second.init()
	opening := &conn{agent: ta.a, c: ta.conns[len(ta.conns)-1], open: map[string]*acpSession{}}
	s.attach(opening)
	defer s.detach(opening)

	const n = maxHeld + 10
	for i := range n {
		s.push(item{update: &acp.SessionUpdate{AgentMessageChunk: textChunk(fmt.Sprintf("%d,", i))}})
	}
	waitFor(t, "the first client's updates", func() bool { return len(first.updatesOf(id)) >= n+1 })
	time.Sleep(100 * time.Millisecond)
	if got := len(second.updatesOf(id)); got != 0 {
		t.Fatalf("the opening client got %d updates before its answer", got)
	}

	s.answered(opening)
	waitFor(t, "the held updates", func() bool { return len(second.updatesOf(id)) >= maxHeld })
	time.Sleep(100 * time.Millisecond)
	ups := second.updatesOf(id)
	if len(ups) != maxHeld {
		t.Fatalf("the opening client got %d held updates, want %d", len(ups), maxHeld)
	}
	for i, u := range ups {
		if want := fmt.Sprintf("%d,", i); u.AgentMessageChunk == nil || u.AgentMessageChunk.Content.Text.Text != want {
			t.Fatalf("held update %d out of order: %+v, want %q", i, u, want)
		}
	}
	// From now on it gets what comes at once.
	s.push(item{update: &acp.SessionUpdate{AgentMessageChunk: textChunk("after")}})
	waitFor(t, "an update after the answer", func() bool { return len(second.updatesOf(id)) == maxHeld+1 })
}

// A client that sends session/prompt right after session/load, without
// waiting for the load's answer, gets the prompt's updates (held for it
// until that answer) before the prompt's answer, as every client gets a
// turn's updates before its answer.
func TestPromptSentWithLoadIsAnsweredAfterItsUpdates(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"echo":true}]}]}`, "allow")
	first := ta.connect()
	first.init()
	cwd := t.TempDir()
	const rounds = 25
	for i := range rounds {
		id := first.newSession(cwd)
		if _, err := first.prompt(id, "one"); err != nil {
			t.Fatal(err)
		}
		s := ta.a.lookup(id)
		second := ta.connect()
		second.init()
		loaded := make(chan error, 1)
		go func() {
			loaded <- second.call(acp.MethodSessionLoad, acp.LoadSessionRequest{SessionID: acp.SessionId(id), CWD: cwd, MCPServers: []acp.McpServer{}}, nil)
		}()
		// The prompt follows as soon as the load has attached the
		// connection: its answer may not be queued yet.
		deadline := time.Now().Add(30 * time.Second)
		for s.clientCount() < 2 {
			if time.Now().After(deadline) {
				t.Fatal("session/load never attached the connection")
			}
			runtime.Gosched()
		}
		if _, err := second.prompt(id, fmt.Sprintf("two %d", i)); err != nil {
			t.Fatal(err)
		}
		if got := second.text(id, "agent"); !strings.Contains(got, fmt.Sprintf("You said: two %d", i)) {
			t.Fatalf("round %d: the prompt was answered before its updates arrived; the agent's text so far: %q", i, got)
		}
		if err := <-loaded; err != nil {
			t.Fatal(err)
		}
	}
}
