package acpserver

import (
	"context"
	"path/filepath"
	"testing"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/store"
)

func peerOf(principal string, admin bool) jsonrpc.Peer {
	return jsonrpc.Peer{Transport: "ws", UID: -1, PID: -1, Label: "ws:" + principal, Principal: principal, Admin: admin}
}

// listed returns the ids session/list shows cl.
func listed(cl *client) map[string]bool {
	cl.t.Helper()
	var res acp.ListSessionsResponse
	cl.must(acp.MethodSessionList, acp.ListSessionsRequest{}, &res)
	out := map[string]bool{}
	for _, s := range res.Sessions {
		out[string(s.SessionID)] = true
	}
	return out
}

// TestPrincipalsSeeTheirOwnSessions: alice's and bob's sessions, and the
// daemon user's, are each seen and used only by their principal; an
// admin sees and uses all; a session one may not see is answered as one
// that does not exist.
func TestPrincipalsSeeTheirOwnSessions(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"one"}]},{"steps":[{"text":"two"}]},{"steps":[{"text":"three"}]}]}`, PermissionAllow)
	work := t.TempDir()
	alice := ta.connectAs(peerOf("alice", false))
	bob := ta.connectAs(peerOf("bob", false))
	local := ta.connect()
	root := ta.connectAs(peerOf("root", true))
	for _, c := range []*client{alice, bob, local, root} {
		c.init()
	}
	aliceID := alice.newSession(work)
	if stop, err := alice.prompt(aliceID, "hi"); err != nil || stop != acp.StopReasonEndTurn {
		t.Fatalf("alice's prompt: %v %v", stop, err)
	}
	bobID := bob.newSession(work)
	localID := local.newSession(work)

	// The store records each session's principal.
	st, err := store.Open(context.Background(), filepath.Join(ta.dir, "sessions"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{aliceID: "alice", bobID: "bob", localID: ""} {
		e, err := st.Get(context.Background(), id)
		if err != nil || e.Owner != want {
			t.Errorf("the store's entry of %s: owner %q (%v), want %q", id, e.Owner, err, want)
		}
	}

	for _, tc := range []struct {
		name string
		c    *client
		own  string
	}{{"alice", alice, aliceID}, {"bob", bob, bobID}, {"the daemon's user", local, localID}} {
		got := listed(tc.c)
		if len(got) != 1 || !got[tc.own] {
			t.Errorf("%s lists %v, want only %s", tc.name, got, tc.own)
		}
	}
	if got := listed(root); !got[aliceID] || !got[bobID] || !got[localID] {
		t.Errorf("the admin lists %v, want every session", got)
	}

	// Bob may not touch alice's session by its id: each method answers
	// unknown_session, as for an id that does not exist.
	id := acp.SessionId(aliceID)
	for _, tc := range []struct {
		method string
		params any
	}{
		{acp.MethodSessionLoad, acp.LoadSessionRequest{SessionID: id, CWD: work, MCPServers: []acp.McpServer{}}},
		{acp.MethodSessionResume, acp.ResumeSessionRequest{SessionID: id, CWD: work}},
		{acp.MethodSessionDelete, acp.DeleteSessionRequest{SessionID: id}},
		{acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: id}},
		{acp.MethodSessionPrompt, acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: "mine now"}}}}},
		{acp.MethodZotSessionHistory, acp.SessionHistoryRequest{SessionID: aliceID}},
		{acp.MethodZotSessionFork, acp.SessionForkRequest{SessionID: aliceID}},
		{acp.MethodZotSessionSteer, map[string]any{"sessionId": aliceID, "message": "x"}},
	} {
		for _, c := range []*client{bob, local} {
			err := c.bad(tc.method, tc.params)
			if err == nil {
				t.Errorf("%s of alice's session by another principal succeeded", tc.method)
				continue
			}
			if kind, _, _ := errKind(t, err); kind != string(acp.ErrorKindUnknownSession) {
				t.Errorf("%s of alice's session by another principal: %v, want unknown_session", tc.method, err)
			}
		}
	}
	// Status shows bob only his open sessions.
	var st1 acp.StatusResponse
	bob.must(acp.MethodZotStatus, nil, &st1)
	for _, s := range st1.Sessions {
		if string(s.SessionID) != bobID {
			t.Errorf("bob's status shows session %s", s.SessionID)
		}
	}

	// The admin loads alice's session and prompts in it; alice sees it.
	root.must(acp.MethodSessionLoad, acp.LoadSessionRequest{SessionID: id, CWD: work, MCPServers: []acp.McpServer{}}, nil)
	if got := root.text(aliceID, "agent"); got != "one" {
		t.Errorf("the admin's replay of alice's session: %q", got)
	}
	if _, err := root.prompt(aliceID, "from root"); err != nil {
		t.Fatal(err)
	}
	// Alice deletes her own session.
	alice.must(acp.MethodSessionDelete, acp.DeleteSessionRequest{SessionID: id}, nil)
	if listed(root)[aliceID] {
		t.Error("alice's deleted session is still listed")
	}
}

// TestPrincipalSessionCap: a principal of the network listener opens at
// most MaxSessions sessions at once; others, and the daemon's user, are
// not held by its count.
func TestPrincipalSessionCap(t *testing.T) {
	ta := newTestAgent(t, "", `{"turns":[{"steps":[{"text":"one"}]}]}`, PermissionAllow)
	ta.a.opts.MaxSessions = 2
	work := t.TempDir()
	alice := ta.connectAs(peerOf("alice", false))
	bob := ta.connectAs(peerOf("bob", false))
	local := ta.connect()
	for _, c := range []*client{alice, bob, local} {
		c.init()
	}
	first := alice.newSession(work)
	alice.newSession(work)
	err := alice.bad(acp.MethodSessionNew, acp.NewSessionRequest{CWD: work, MCPServers: []acp.McpServer{}})
	if err == nil {
		t.Fatal("alice's third session was opened")
	}
	if kind, _, retry := errKind(t, err); kind != string(acp.ErrorKindLimitExceeded) || !retry {
		t.Errorf("alice's third session: %v, want limit_exceeded (retryable)", err)
	}
	bob.newSession(work)
	for range 3 {
		local.newSession(work)
	}
	// A closed session gives its place back.
	alice.must(acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: acp.SessionId(first)}, nil)
	waitFor(t, "alice's closed session to be freed", func() bool { return ta.a.lookup(first) == nil })
	alice.newSession(work)
}
