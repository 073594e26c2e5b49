package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// forkAnswer is the result of _zot/session/fork.
type forkAnswer struct {
	SessionID    string `json:"sessionId"`
	ParentID     string `json:"parentId"`
	AtIndex      int    `json:"atIndex"`
	MessageID    string `json:"messageId"`
	MessageCount int    `json:"messageCount"`
	Title        string `json:"title"`
	Message      struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
}

// forkOver calls _zot/session/fork and decodes its answer.
func forkOver(t *testing.T, p *acpPeer, id, params string) forkAnswer {
	t.Helper()
	f, _ := p.call(id, "_zot/session/fork", params, "")
	var r forkAnswer
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.SessionID == "" {
		t.Fatalf("_zot/session/fork %s: %s", params, f.raw)
	}
	return r
}

// TestACPSessionFork: the daemon forks an open session before its last
// prompt and a fork of it by message id; the fork loads with the
// messages before the prompt and goes on; the sessions are a tree for
// zot sessions list --tree; no such session or prompt is refused with
// its kind. zot acp serves the same method.
func TestACPSessionFork(t *testing.T) {
	dir := doorDir(t)
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "s")
	work := t.TempDir()
	turn := func(text string) any {
		return map[string]any{"steps": []any{map[string]any{"text": text}}}
	}
	s := script(t, map[string]any{"turns": []any{turn("one."), turn("two."), turn("two, again."), turn("three.")}})
	d := startZotDaemon(t, doorEnv(home, "ZOT_SOCKET="+sock), "--script", s)
	d.waitFor(t, "listening on")
	conn, _ := dialDoor(t, sock)
	p := checked(t, conn)
	p.call("1", "initialize", `{"protocolVersion":1}`, "")
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	for i, text := range []string{"first", "second"} {
		if f, _ := p.call(fmt.Sprint(10+i), "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, id, text), ""); f.Error != nil {
			t.Fatalf("prompt %s: %s", text, f.raw)
		}
	}

	// The session is open here: forked all the same, before "second".
	fk := forkOver(t, p, "20", fmt.Sprintf(`{"sessionId":%q}`, id))
	if fk.ParentID != id || fk.AtIndex != 2 || fk.MessageCount != 2 || fk.Title != "first" || fk.Message.Role != "user" || len(fk.Message.Content) != 1 || fk.Message.Content[0].Text != "second" {
		t.Errorf("fork: %+v", fk)
	}
	f, before := p.call("21", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, fk.SessionID, work), "")
	if f.Error != nil || chunkText(before, "user_message_chunk") != "first" || chunkText(before, "agent_message_chunk") != "one." {
		t.Fatalf("load of the fork: %s (user %q)", f.raw, chunkText(before, "user_message_chunk"))
	}
	if f, _ := p.call("22", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"second, edited"}]}`, fk.SessionID), ""); f.Error != nil {
		t.Fatalf("prompt in the fork: %s", f.raw)
	}
	// A fork of the fork, before its edited prompt (position 2, which
	// _zot/session/history lists).
	hist, _ := p.call("23", "_zot/session/history", fmt.Sprintf(`{"sessionId":%q}`, fk.SessionID), "")
	if !strings.Contains(string(hist.Result), "second, edited") {
		t.Fatalf("history of the fork: %s", hist.raw)
	}
	grand := forkOver(t, p, "24", fmt.Sprintf(`{"sessionId":%q,"atIndex":2}`, fk.SessionID))
	if grand.ParentID != fk.SessionID || grand.MessageCount != 2 || grand.Message.Content[0].Text != "second, edited" {
		t.Errorf("fork of the fork: %+v", grand)
	}
	// The message id of the first fork's answer names the same prompt
	// of the parent again.
	again := forkOver(t, p, "25", fmt.Sprintf(`{"sessionId":%q,"atMessageId":%q}`, id, fk.MessageID))
	if again.AtIndex != 2 || again.MessageID != fk.MessageID {
		t.Errorf("fork by message id: %+v", again)
	}

	// Refusals: no such session, a position that is not a prompt, both
	// points at once.
	f, _ = p.call("30", "_zot/session/fork", `{"sessionId":"20200101T000000Z-0000000000000000"}`, "")
	if f.Error == nil || f.Error.Data["kind"] != "unknown_session" {
		t.Errorf("fork of no session: %s", f.raw)
	}
	f, _ = p.call("31", "_zot/session/fork", fmt.Sprintf(`{"sessionId":%q,"atIndex":1}`, id), "")
	if f.Error == nil || f.Error.Data["kind"] != "invalid_params" || f.Error.Data["field"] != "atIndex" {
		t.Errorf("fork at an answer: %s", f.raw)
	}
	f, _ = p.call("32", "_zot/session/fork", fmt.Sprintf(`{"sessionId":%q,"atIndex":0,"atMessageId":"x"}`, id), "")
	if f.Error == nil || f.Error.Data["kind"] != "invalid_params" {
		t.Errorf("fork at two points: %s", f.raw)
	}
	f, _ = p.call("33", "session/list", `{}`, "")
	var listed struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Meta      struct {
				Zot struct {
					ParentID     string `json:"parentId"`
					ForkIndex    *int   `json:"forkIndex"`
					MessageCount int    `json:"messageCount"`
				} `json:"zot"`
			} `json:"_meta"`
		} `json:"sessions"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &listed) != nil || len(listed.Sessions) != 4 {
		t.Fatalf("session/list after the forks: %s", f.raw)
	}
	for _, l := range listed.Sessions {
		z := l.Meta.Zot
		switch l.SessionID {
		case id:
			if z.ParentID != "" || z.MessageCount != 4 {
				t.Errorf("session/list's parent: %+v", z)
			}
		case grand.SessionID:
			if z.ParentID != fk.SessionID || z.ForkIndex == nil || *z.ForkIndex != 2 || z.MessageCount != 2 {
				t.Errorf("session/list's fork of the fork: %+v", z)
			}
		}
	}

	out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, dir, "sessions", "list", "--tree", "--json")
	var trees []treeSession
	if code != 0 || json.Unmarshal([]byte(out), &trees) != nil || len(trees) != 1 || trees[0].ID != id {
		t.Fatalf("list --tree after the daemon's forks: exit %d\n%s%s", code, out, errOut)
	}
	kids := map[string]treeSession{}
	for _, c := range trees[0].Children {
		kids[c.ID] = c
	}
	if c := kids[fk.SessionID]; len(kids) != 2 || len(c.Children) != 1 || c.Children[0].ID != grand.SessionID {
		t.Errorf("the tree: %s", out)
	}

	// The daemon has the parent open: zot sessions rm refuses it, and
	// removes the fork of the fork, which nobody has open; the index
	// then lists the rest.
	_, errOut, code = runExt(t, []string{"ZOT_HOME=" + home}, dir, "sessions", "rm", id, grand.SessionID)
	if code != 1 || !strings.Contains(errOut, "open in another zot") {
		t.Errorf("rm of a session the daemon holds: exit %d %q", code, errOut)
	}
	if got := listSessionsJSON(t, home); len(got) != 3 {
		t.Errorf("after rm: %d sessions, want 3 (the parent kept, the fork of the fork gone)", len(got))
	}

	// zot acp: the same method on stdio, over the same store.
	a := startACPProc(t, home, "--provider", "scripted", "--script", s)
	a.peer.call("1", "initialize", `{"protocolVersion":1}`, "")
	other := forkOver(t, a.peer, "2", fmt.Sprintf(`{"sessionId":%q,"atIndex":0}`, id))
	if other.ParentID != id || other.AtIndex != 0 || other.MessageCount != 0 || other.Message.Content[0].Text != "first" {
		t.Errorf("zot acp's fork: %+v", other)
	}
}
