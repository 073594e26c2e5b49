package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTaskTranscriptKept: the sub-agent of a stored session is kept in
// the store as a session of its own, linked to the session and its task
// call: list --tree draws it under the session, show names both and its
// messages; a zot rpc session in memory keeps none.
func TestTaskTranscriptKept(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o700)
	env := []string{"ZOT_HOME=" + home}
	if out, errOut, code := runExt(t, env, proj, "-p", "go", "--provider", "scripted", "--script", oneChildScript(t), "--cwd", proj, "--continue"); code != 0 {
		t.Fatalf("zot -p: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := runExt(t, env, root, "sessions", "list", "--tree", "--json")
	var trees []treeSession
	if code != 0 || json.Unmarshal([]byte(out), &trees) != nil {
		t.Fatalf("list --tree --json: exit %d\n%s%s", code, out, errOut)
	}
	if len(trees) != 1 || len(trees[0].Children) != 1 {
		t.Fatalf("want the session with its sub-agent's under it: %s", out)
	}
	parent, child := trees[0], trees[0].Children[0]
	var full []struct {
		Children []struct {
			ParentCall string `json:"parent_call_id"`
			ForkIndex  *int   `json:"fork_index"`
			Messages   int    `json:"message_count"`
			Title      string `json:"title"`
		} `json:"children"`
	}
	json.Unmarshal([]byte(out), &full)
	entry := full[0].Children[0]
	raw, _ := json.Marshal(child)
	if child.Parent != parent.ID || entry.ParentCall != "t1" || entry.ForkIndex != nil || entry.Messages != 4 || !strings.HasPrefix(entry.Title, "child: list the files") {
		t.Errorf("the sub-agent's entry: %s", raw)
	}
	out, _, code = runExt(t, env, root, "sessions", "list", "--tree")
	if code != 0 || !strings.Contains(out, "task call t1") {
		t.Errorf("list --tree:\n%s", out)
	}
	out, _, code = runExt(t, env, root, "sessions", "show", child.ID)
	if code != 0 || !strings.Contains(out, "sub-agent of "+parent.ID+", task call t1") || !strings.Contains(out, "two files") {
		t.Errorf("show of the sub-agent's session: exit %d\n%s", code, out)
	}

	// zot rpc without --session keeps its session in memory, and so its
	// sub-agents'.
	home2 := filepath.Join(root, "home2")
	os.MkdirAll(home2, 0o700)
	p := start(t, []string{"ZOT_HOME=" + home2}, rpcArgs(t, "--script", oneChildScript(t))...)
	p.send(`{"id":"1","type":"prompt","message":"go"}`)
	p.response()
	p.untilDone()
	p.exit()
	if list := listSessionsJSON(t, home2); len(list) != 0 {
		t.Errorf("a memory-only session's sub-agent was kept: %+v", list)
	}
}
