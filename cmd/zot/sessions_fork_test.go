package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// treeSession is an entry of `zot sessions list --tree --json`.
type treeSession struct {
	listedSession
	Parent    string        `json:"parent_id"`
	ForkIndex *int          `json:"fork_index"`
	Children  []treeSession `json:"children"`
}

// forkJSON runs `zot sessions fork --json` with args under home.
func forkJSON(t *testing.T, home string, args ...string) (id string, at int, prompt string) {
	t.Helper()
	out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, home, append([]string{"sessions", "fork", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("zot sessions fork %v: exit %d\n%s", args, code, errOut)
	}
	var f struct {
		Session   listedSession `json:"session"`
		AtIndex   int           `json:"at_index"`
		MessageID string        `json:"message_id"`
		Message   struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil || len(f.Message.Content) == 0 {
		t.Fatalf("zot sessions fork --json: %v\n%s", err, out)
	}
	return f.Session.ID, f.AtIndex, f.Message.Content[0].Text
}

// TestSessionsForkTree: a fork holds the messages before the prompt it
// was made at and links to its parent; a fork of a fork is drawn under
// it by list --tree, in text and JSON; show names each prompt's position
// and id, which --at takes.
func TestSessionsForkTree(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o700)
	for _, p := range []string{"first", "second", "third"} {
		printContinue(t, home, proj, p)
	}
	parent := listSessionsJSON(t, home)[0].ID

	// The default: before the last prompt.
	fork, at, prompt := forkJSON(t, home, parent)
	if at != 4 || prompt != "third" {
		t.Errorf("fork at the last prompt: at %d, prompt %q", at, prompt)
	}
	// A fork of the fork, by the message id show gives.
	out, _, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "show", fork)
	if code != 0 || !strings.Contains(out, "fork of  "+parent) || !strings.Contains(out, "[user #2 ") {
		t.Fatalf("show of the fork: exit %d\n%s", code, out)
	}
	msgID := strings.Fields(out[strings.Index(out, "[user #2 "):])[2]
	msgID = strings.TrimSuffix(msgID, "]")
	grand, at, prompt := forkJSON(t, home, fork[:len(fork)-3], "--at", msgID)
	if at != 2 || prompt != "second" {
		t.Errorf("fork of the fork at %s: at %d, prompt %q", msgID, at, prompt)
	}
	other, _, _ := forkJSON(t, home, parent, "--at", "0")

	list := listSessionsJSON(t, home)
	counts := map[string]int{}
	for _, e := range list {
		counts[e.ID] = e.Messages
	}
	if len(list) != 4 || counts[parent] != 6 || counts[fork] != 4 || counts[grand] != 2 || counts[other] != 0 {
		t.Errorf("sessions and their messages: %v", counts)
	}

	out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "list", "--tree", "--json")
	var trees []treeSession
	if code != 0 || json.Unmarshal([]byte(out), &trees) != nil {
		t.Fatalf("list --tree --json: exit %d\n%s%s", code, out, errOut)
	}
	if len(trees) != 1 || trees[0].ID != parent || len(trees[0].Children) != 2 {
		t.Fatalf("tree: %s", out)
	}
	var mid treeSession
	for _, c := range trees[0].Children {
		if c.ID == fork {
			mid = c
		}
	}
	if mid.Parent != parent || mid.ForkIndex == nil || *mid.ForkIndex != 4 || len(mid.Children) != 1 || mid.Children[0].ID != grand || mid.Children[0].Parent != fork {
		t.Errorf("the fork and its fork in the tree: %s", out)
	}
	out, _, code = runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "list", "--tree")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], parent) {
		t.Fatalf("list --tree: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, other+"  ") || !strings.Contains(out, "@0 (empty)") {
		t.Errorf("the empty fork is not drawn as such:\n%s", out)
	}
	var grandLine string
	for _, l := range lines {
		if strings.Contains(l, grand) {
			grandLine = l
		}
	}
	if !strings.HasPrefix(grandLine, "│  └─ "+grand) && !strings.HasPrefix(grandLine, "   └─ "+grand) {
		t.Errorf("the fork of the fork is not drawn two levels down:\n%s", out)
	}

	// The fork goes on from where it was made: --session takes its id.
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	if _, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, proj, "-p", "third, edited", "--provider", "scripted", "--script", s, "--session", fork); code != 0 {
		t.Fatalf("--session FORK: exit %d %s", code, errOut)
	}
	for _, e := range listSessionsJSON(t, home) {
		if e.ID == fork && e.Messages != 6 {
			t.Errorf("the fork after a prompt: %+v", e)
		}
	}

	// Refused: a position that is not a prompt, a message id of none.
	for _, at := range []string{"1", "99", "0123456789abcdef"} {
		_, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "fork", parent, "--at", at)
		if code != 1 || !strings.Contains(errOut, "fork") {
			t.Errorf("fork --at %s: exit %d %q", at, code, errOut)
		}
	}
	if n := len(listSessionsJSON(t, home)); n != 4 {
		t.Errorf("refused forks made sessions: %d", n)
	}
}

// TestSessionsExportImportRemove: an export is one JSON document with the
// transcript and no credentials; its import is a new session with the
// same transcript; rm refuses a session a running zot holds and removes
// it once that zot has gone.
func TestSessionsExportImportRemove(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o700)
	printContinue(t, home, proj, "what is in main.go")
	printContinue(t, home, proj, "and in go.mod")
	id := listSessionsJSON(t, home)[0].ID
	env := []string{"ZOT_HOME=" + home, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key"}

	out, errOut, code := runExt(t, env, root, "sessions", "export", id)
	var doc struct {
		Format  string `json:"format"`
		Session struct {
			ID  string `json:"id"`
			CWD string `json:"cwd"`
		} `json:"session"`
		Messages []json.RawMessage `json:"messages"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Format != "zot-session" || doc.Session.ID != id || doc.Session.CWD != proj || len(doc.Messages) != 4 {
		t.Fatalf("export: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "sk-ant-test") {
		t.Error("the export holds the API key")
	}
	file := filepath.Join(root, "s.json")
	if _, errOut, code := runExt(t, env, root, "sessions", "export", id[:12], "--output", file); code != 0 {
		t.Fatalf("export --output: exit %d %s", code, errOut)
	}

	// Imported twice: two new sessions; the second into another folder.
	out, errOut, code = runExt(t, env, root, "sessions", "import", file, "--json")
	var im struct {
		listedSession
		From string `json:"imported_from"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &im) != nil || im.ID == id || im.From != id || im.CWD != proj || im.Messages != 4 || im.Title != "what is in main.go" {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	elsewhere := filepath.Join(root, "elsewhere")
	os.MkdirAll(elsewhere, 0o700)
	if _, errOut, code := runExt(t, env, root, "sessions", "import", file, "--cwd", elsewhere); code != 0 {
		t.Fatalf("import --cwd: exit %d %s", code, errOut)
	}
	if got := listSessionsJSON(t, home, "--cwd", elsewhere); len(got) != 1 || got[0].Messages != 4 {
		t.Errorf("imported into %s: %+v", elsewhere, got)
	}
	showA, _, _ := runExt(t, env, root, "sessions", "show", id, "--json")
	showB, _, _ := runExt(t, env, root, "sessions", "show", im.ID, "--json")
	if transcriptPart(showA) != transcriptPart(showB) || transcriptPart(showA) == "" {
		t.Errorf("the imported transcript differs:\n%s\n%s", showA, showB)
	}
	// Not an export: refused, nothing stored.
	bad := filepath.Join(root, "bad.json")
	os.WriteFile(bad, []byte(`{"format":"other"}`), 0o600)
	if _, errOut, code := runExt(t, env, root, "sessions", "import", bad); code != 1 || !strings.Contains(errOut, "not an exported zot session") {
		t.Errorf("import of another document: exit %d %q", code, errOut)
	}
	if n := len(listSessionsJSON(t, home)); n != 3 {
		t.Errorf("%d sessions after a refused import, want 3", n)
	}

	// rm: refused while a zot rpc holds the session, done once it left.
	p := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--session", im.ID)...)
	p.send(`{"id":"s","type":"get_state"}`)
	if r, _ := p.response(); !r.Success {
		t.Fatalf("get_state: %s", r.Error)
	}
	out, errOut, code = runExt(t, env, root, "sessions", "rm", im.ID, "--json")
	var rm struct {
		Removed []string `json:"removed"`
		Failed  []struct{ ID, Error string }
	}
	if code != 1 || json.Unmarshal([]byte(out), &rm) != nil || len(rm.Removed) != 0 || len(rm.Failed) != 1 || !strings.Contains(rm.Failed[0].Error, "open in another zot") {
		t.Fatalf("rm of a held session: exit %d\n%s%s", code, out, errOut)
	}
	if n := len(listSessionsJSON(t, home)); n != 3 {
		t.Errorf("%d sessions after a refused rm, want 3", n)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("zot rpc: exit %d", code)
	}
	out, errOut, code = runExt(t, env, root, "sessions", "rm", im.ID, id)
	if code != 0 || !strings.Contains(out, "removed "+im.ID) || !strings.Contains(out, "removed "+id) {
		t.Fatalf("rm: exit %d\n%s%s", code, out, errOut)
	}
	left := listSessionsJSON(t, home)
	if len(left) != 1 || left[0].CWD != elsewhere {
		t.Errorf("after rm: %+v", left)
	}
	var idx struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	data, _ := os.ReadFile(filepath.Join(home, "sessions", "index.json"))
	if json.Unmarshal(data, &idx) != nil || len(idx.Sessions) != 1 {
		t.Errorf("the index after rm: %s", data)
	}
	if _, errOut, code := runExt(t, env, root, "sessions", "rm", id); code != 1 || !strings.Contains(errOut, "no session") {
		t.Errorf("rm of a removed session: exit %d %q", code, errOut)
	}
}

// transcriptPart is the transcript of `zot sessions show --json`.
func transcriptPart(out string) string {
	var v struct {
		Transcript json.RawMessage `json:"transcript"`
	}
	if json.Unmarshal([]byte(out), &v) != nil {
		return ""
	}
	return string(v.Transcript)
}

// TestSessionsForkWhileWriting: processes that fork one session at once,
// while another zot appends to it, each make a whole fork, and the index
// lists every session, the writer's last messages included.
func TestSessionsForkWhileWriting(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o700)
	printContinue(t, home, proj, "start")
	parent := listSessionsJSON(t, home)[0].ID

	const rounds, forkers = 3, 3
	forks := make(chan string, rounds*forkers)
	for r := range rounds {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the writer: one more exchange in the parent
			defer wg.Done()
			s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
			if _, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, proj, "-p", fmt.Sprintf("more %d", r), "--provider", "scripted", "--script", s, "--session", parent); code != 0 {
				t.Errorf("writer: exit %d %s", code, errOut)
			}
		}()
		for range forkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "fork", parent, "--at", "0", "--json")
				var f struct {
					Session listedSession `json:"session"`
				}
				if code != 0 || json.Unmarshal([]byte(out), &f) != nil {
					t.Errorf("fork: exit %d\n%s%s", code, out, errOut)
					return
				}
				forks <- f.Session.ID
			}()
		}
		wg.Wait()
	}
	close(forks)
	list := listSessionsJSON(t, home)
	byID := map[string]listedSession{}
	for _, e := range list {
		byID[e.ID] = e
	}
	n := 0
	for id := range forks {
		n++
		if e, ok := byID[id]; !ok || e.Messages != 0 || e.Error != "" {
			t.Errorf("fork %s: %+v (listed %v)", id, e, ok)
		}
	}
	if n != rounds*forkers || len(list) != n+1 || byID[parent].Messages != 2*(rounds+1) {
		t.Errorf("%d forks, %d listed, parent %+v", n, len(list), byID[parent])
	}
	// The index on disk agrees, and nothing half written is left.
	data, _ := os.ReadFile(filepath.Join(home, "sessions", "index.json"))
	var idx struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if json.Unmarshal(data, &idx) != nil || len(idx.Sessions) != len(list) {
		t.Errorf("index.json: %s", data)
	}
	ents, _ := os.ReadDir(filepath.Join(home, "sessions"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestRPCSessions: zot rpc lists, loads and forks stored sessions on
// request, keeping its transcript in memory until asked; a fork of its
// own session goes on from before the prompt, and the prompt comes back.
func TestRPCSessions(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o700)
	printContinue(t, home, proj, "alpha")
	printContinue(t, home, proj, "beta")
	parent := listSessionsJSON(t, home)[0].ID

	p := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t)...)
	p.send(`{"id":1,"type":"list_sessions"}`)
	r, _ := p.response()
	wantResponse(t, r, "list_sessions", true, "")
	var list wire.SessionsResult
	if json.Unmarshal(r.Data, &list) != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != parent || list.Sessions[0].MessageCount != 4 || list.Sessions[0].Current != nil {
		t.Fatalf("list_sessions: %s", r.Data)
	}
	p.send(fmt.Sprintf(`{"id":2,"type":"list_sessions","cwd":%q}`, root))
	if r, _ := p.response(); !strings.Contains(string(r.Data), `"sessions":[]`) {
		t.Errorf("list_sessions of another folder: %s", r.Data)
	}
	// Memory-only: no session of its own to fork.
	p.send(`{"id":3,"type":"fork_session"}`)
	r, _ = p.response()
	wantResponse(t, r, "fork_session", false, wire.CodeInvalidParams)
	p.send(`{"id":4,"type":"load_session","session_id":"20200101T000000Z-0000000000000000"}`)
	r, _ = p.response()
	wantResponse(t, r, "load_session", false, wire.CodeNotFound)

	p.send(fmt.Sprintf(`{"id":5,"type":"load_session","session_id":%q}`, parent))
	r, _ = p.response()
	wantResponse(t, r, "load_session", true, "")
	p.send(`{"id":6,"type":"get_messages"}`)
	r, _ = p.response()
	var msgs wire.MessagesResult
	if json.Unmarshal(r.Data, &msgs) != nil || len(msgs.Messages) != 4 {
		t.Fatalf("get_messages after load_session: %s", r.Data)
	}
	// Fork its own session before "beta" and go on from there.
	p.send(`{"id":7,"type":"fork_session"}`)
	r, _ = p.response()
	wantResponse(t, r, "fork_session", true, "")
	var f wire.ForkSessionResult
	if err := json.Unmarshal(r.Data, &f); err != nil {
		t.Fatal(err)
	}
	if !f.Loaded || f.AtIndex != 2 || f.Session.ParentID != parent || f.Session.MessageCount != 2 || f.Session.Current == nil {
		t.Errorf("fork_session: %s", r.Data)
	}
	if tb, ok := f.Message.Content[0].(*wire.TextBlock); !ok || tb.Text != "beta" {
		t.Errorf("the prompt forked at: %s", r.Data)
	}
	p.send(`{"id":8,"type":"prompt","message":"gamma"}`)
	p.response()
	p.untilDone()
	// A fork of the fork, not loaded, by message id.
	p.send(fmt.Sprintf(`{"id":9,"type":"fork_session","session_id":%q,"at_index":0,"load":false}`, f.Session.ID))
	r, _ = p.response()
	wantResponse(t, r, "fork_session", true, "")
	var g wire.ForkSessionResult
	json.Unmarshal(r.Data, &g)
	if g.Loaded || g.Session.ParentID != f.Session.ID || g.Session.MessageCount != 0 || g.Session.Current != nil {
		t.Errorf("fork of the fork: %s", r.Data)
	}
	p.send(`{"id":10,"type":"fork_session","at_index":1}`)
	r, _ = p.response()
	wantResponse(t, r, "fork_session", false, wire.CodeNotFound)
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}

	counts := map[string]int{}
	parents := map[string]string{}
	out, _, _ := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "list", "--json")
	var all []treeSession
	json.Unmarshal([]byte(out), &all)
	for _, e := range all {
		counts[e.ID], parents[e.ID] = e.Messages, e.Parent
	}
	if len(all) != 3 || counts[parent] != 4 || counts[f.Session.ID] != 4 || parents[f.Session.ID] != parent || parents[g.Session.ID] != f.Session.ID {
		t.Errorf("after the rpc run: %s", out)
	}

	// Another zot holds the session: load_session is session_locked.
	holder := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t, "--session", parent)...)
	holder.send(`{"id":1,"type":"get_state"}`)
	holder.response()
	q := start(t, []string{"ZOT_HOME=" + home}, rpcArgs(t)...)
	q.send(fmt.Sprintf(`{"id":1,"type":"load_session","session_id":%q}`, parent))
	r, _ = q.response()
	wantResponse(t, r, "load_session", false, wire.CodeSessionLocked)
	q.send(`{"id":2,"type":"get_messages"}`)
	if r, _ := q.response(); !strings.Contains(string(r.Data), `"messages":[]`) {
		t.Errorf("a refused load changed the transcript: %s", r.Data)
	}
}

// TestSessionsTextKeepsEscapesOffTheTerminal: an imported export whose
// id, prompt, answer and tool output hold terminal escapes (a clear, a
// window title, OSC 52 that writes the clipboard, a bare CSI, a carriage
// return) shows them as visible text in import's, list's, list --tree's,
// show's and fork's output, never as raw control bytes.
func TestSessionsTextKeepsEscapesOffTheTerminal(t *testing.T) {
	root := t.TempDir()
	env := []string{"ZOT_HOME=" + t.TempDir()}
	evil := "\x1b[2J\x1b]0;title\x07\x1b]52;c;cHduZWQ=\x07\u009b31m\rx"
	exp := map[string]any{
		"format": "zot-session", "version": 1,
		"session": map[string]any{"id": "id" + evil, "cwd": root},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "ask" + evil}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "answer" + evil}}},
		},
	}
	data, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "evil.json")
	os.WriteFile(file, data, 0o644)
	raw := func(what, out string) {
		t.Helper()
		if i := strings.IndexFunc(out, func(r rune) bool { return r == '\x1b' || r == '\a' || r == '\r' || r == '\u009b' }); i >= 0 {
			t.Errorf("%s writes a raw control character: %q", what, out)
		}
	}
	out, errOut, code := runExt(t, env, root, "sessions", "import", file)
	if code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	raw("import", out)
	id := strings.SplitN(out, "\n", 2)[0]
	for _, args := range [][]string{{"list"}, {"list", "--tree"}, {"show", id}, {"fork", id}} {
		out, errOut, code := runExt(t, env, root, append([]string{"sessions"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
		raw(strings.Join(args, " "), out)
		if args[0] == "show" && !strings.Contains(out, `answer\x1b[2J`) {
			t.Errorf("show hides the answer's escape instead of showing it: %q", out)
		}
	}
}
