package main

// Checkpoints and undo through the real binary, in every door: zot rpc's
// undo command and /undo, ACP's _zot/session/undo, and zot sessions undo.
// The scripted provider plays the tool calls.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// toolStep is a scripted step that calls one tool.
func toolStep(name string, args map[string]any) map[string]any {
	return map[string]any{"tool_calls": []any{map[string]any{"name": name, "args": args}}}
}

// turnOf is a scripted turn: the steps, then an answer.
func turnOf(steps ...map[string]any) map[string]any {
	list := make([]any, 0, len(steps)+1)
	for _, s := range steps {
		list = append(list, s)
	}
	return map[string]any{"steps": append(list, map[string]any{"text": "done"})}
}

// fileText is what path holds, "<absent>" when there is no file.
func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// promptDone sends a prompt and reads its events to its done.
func promptDone(t *testing.T, p *proc, id, text string) []wire.Event {
	t.Helper()
	p.send(fmt.Sprintf(`{"id":%q,"type":"prompt","message":%q}`, id, text))
	resp, _ := p.response()
	wantResponse(t, resp, "prompt", true, "")
	return p.untilDone()
}

// undoResult decodes a successful undo's answer.
func undoResult(t *testing.T, resp *wire.Response) *wire.UndoResult {
	t.Helper()
	wantResponse(t, resp, "undo", true, "")
	var res wire.UndoResult
	if err := json.Unmarshal(resp.Data, &res); err != nil {
		t.Fatalf("undo's answer %s: %v", resp.Data, err)
	}
	return &res
}

// actions maps each undone file's base name to what was done to it.
func actions(files []wire.UndoFile) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[filepath.Base(f.Path)] = string(f.Action)
	}
	return out
}

// stateMessages asks get_state for the transcript's length.
func stateMessages(t *testing.T, p *proc) int64 {
	t.Helper()
	p.send(`{"id":"state","type":"get_state"}`)
	resp, _ := p.response()
	res, err := resp.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*wire.StateResult).MessageCount
}

// TestUndoTurnOneOfThreeOverRPC: three turns write and edit files; undo
// of turn 1 puts every file back as it was before it (removing those the
// turns made) and empties the transcript; a new turn is undone with /undo;
// with no turn left, undo is not_found.
func TestUndoTurnOneOfThreeOverRPC(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.txt")
	os.WriteFile(keep, []byte("v1\n"), 0o644)
	s := script(t, map[string]any{"turns": []any{
		turnOf(toolStep("write", map[string]any{"path": "a.txt", "content": "one"}), toolStep("edit", map[string]any{"path": "keep.txt", "edits": []any{map[string]any{"oldText": "v1", "newText": "v2"}}})),
		turnOf(toolStep("write", map[string]any{"path": "b.txt", "content": "bee"})),
		turnOf(toolStep("edit", map[string]any{"path": "keep.txt", "edits": []any{map[string]any{"oldText": "v2", "newText": "v3"}}}), toolStep("write", map[string]any{"path": "a.txt", "content": "three"})),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	for i, text := range []string{"first", "second", "third"} {
		promptDone(t, p, fmt.Sprint(i+1), text)
	}
	if fileText(t, keep) != "v3\n" || fileText(t, filepath.Join(dir, "a.txt")) != "three" || fileText(t, filepath.Join(dir, "b.txt")) != "bee" {
		t.Fatalf("the turns did not run: keep %q", fileText(t, keep))
	}
	p.send(`{"id":"u1","type":"undo","turn":1}`)
	resp, _ := p.response()
	res := undoResult(t, resp)
	want := map[string]string{"a.txt": "removed", "b.txt": "removed", "keep.txt": "restored"}
	if res.Turn != 1 || res.MessageCount != 0 || fmt.Sprint(actions(res.Files)) != fmt.Sprint(want) {
		t.Errorf("undo of turn 1: %s", resp.Data)
	}
	if fileText(t, keep) != "v1\n" || fileText(t, filepath.Join(dir, "a.txt")) != "<absent>" || fileText(t, filepath.Join(dir, "b.txt")) != "<absent>" {
		t.Errorf("after the undo: keep %q a %q b %q", fileText(t, keep), fileText(t, filepath.Join(dir, "a.txt")), fileText(t, filepath.Join(dir, "b.txt")))
	}
	if n := stateMessages(t, p); n != 0 {
		t.Errorf("%d messages after undoing turn 1", n)
	}

	// A new turn (the script, which goes by the transcript, plays its
	// first turn again), undone by the slash command.
	promptDone(t, p, "4", "again")
	if fileText(t, filepath.Join(dir, "a.txt")) != "one" || fileText(t, keep) != "v2\n" {
		t.Fatal("the new turn did not write a.txt and edit keep.txt")
	}
	p.send(`{"id":"u2","type":"run_command","name":"undo"}`)
	resp, _ = p.response()
	wantResponse(t, resp, "run_command", true, "")
	if !strings.Contains(string(resp.Data), "a.txt: removed") || fileText(t, filepath.Join(dir, "a.txt")) != "<absent>" || fileText(t, keep) != "v1\n" {
		t.Errorf("/undo: %s", resp.Data)
	}
	p.send(`{"id":"u3","type":"undo"}`)
	resp, _ = p.response()
	wantResponse(t, resp, "undo", false, wire.CodeNotFound)
	if p.exit() != 0 {
		t.Errorf("exit: %s", p.stderr)
	}
}

// TestUndoRefusedAfterOutsideChange: a file the turn wrote and somebody
// changed since refuses the undo with changed_outside naming it; nothing
// is restored and the transcript stays.
func TestUndoRefusedAfterOutsideChange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(b, []byte("b0"), 0o644)
	s := script(t, map[string]any{"turns": []any{
		turnOf(toolStep("write", map[string]any{"path": "a.txt", "content": "zot"}), toolStep("write", map[string]any{"path": "b.txt", "content": "b1"})),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	promptDone(t, p, "1", "write")
	n := stateMessages(t, p)
	os.WriteFile(a, []byte("mine"), 0o644)
	p.send(`{"id":"2","type":"undo"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "undo", false, wire.CodeChangedOutside)
	if !strings.Contains(resp.Error, a) {
		t.Errorf("the refusal does not name %s: %s", a, resp.Error)
	}
	if fileText(t, a) != "mine" || fileText(t, b) != "b1" || stateMessages(t, p) != n {
		t.Errorf("a refused undo changed something: a %q b %q", fileText(t, a), fileText(t, b))
	}
	// /undo says the same.
	p.send(`{"id":"3","type":"run_command","name":"/undo"}`)
	resp, _ = p.response()
	if !strings.Contains(string(resp.Data), "changed outside zot") || !strings.Contains(string(resp.Data), "a.txt") {
		t.Errorf("/undo after an outside change: %s", resp.Data)
	}
	// Put back as zot left it, the undo goes through.
	os.WriteFile(a, []byte("zot"), 0o644)
	p.send(`{"id":"4","type":"undo"}`)
	resp, _ = p.response()
	undoResult(t, resp)
	if fileText(t, a) != "<absent>" || fileText(t, b) != "b0" {
		t.Errorf("after the undo: a %q b %q", fileText(t, a), fileText(t, b))
	}
}

// TestUndoLeavesTooLargeFile: a file over the 1 MiB a checkpoint keeps is
// recorded without its content: the undo leaves it and says so, and undoes
// the rest.
func TestUndoLeavesTooLargeFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("x", 2<<20)), 0o644)
	s := script(t, map[string]any{"turns": []any{
		turnOf(toolStep("write", map[string]any{"path": "big.txt", "content": "small"}), toolStep("write", map[string]any{"path": "c.txt", "content": "c"})),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	promptDone(t, p, "1", "shrink")
	p.send(`{"id":"2","type":"undo"}`)
	resp, _ := p.response()
	res := undoResult(t, resp)
	got := actions(res.Files)
	if got["big.txt"] != "not_undoable" || got["c.txt"] != "removed" || !strings.Contains(string(resp.Data), "larger than the 1 MiB") {
		t.Errorf("undo: %s", resp.Data)
	}
	if fileText(t, big) != "small" || fileText(t, filepath.Join(dir, "c.txt")) != "<absent>" {
		t.Errorf("after the undo: big %d bytes, c %q", len(fileText(t, big)), fileText(t, filepath.Join(dir, "c.txt")))
	}
}

// gitRepo makes dir a git work tree with files committed.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	for name, body := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	run("add", ".")
	run("commit", "-q", "-m", "start")
}

// TestUndoAfterBashSedInGitTree: what a bash command changed in a git
// work tree (a committed file edited with sed -i, an untracked file
// appended to, a file made) is undone; a file it did not touch is not
// listed.
func TestUndoAfterBashSedInGitTree(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"f.txt": "hello\n", "other.txt": "other\n"})
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("untracked\n"), 0o644)
	s := script(t, map[string]any{"turns": []any{
		turnOf(toolStep("bash", map[string]any{"command": "sed -i s/hello/bye/ f.txt && echo more >> notes.txt && echo made > new.txt"})),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	promptDone(t, p, "1", "edit with sed")
	if fileText(t, filepath.Join(dir, "f.txt")) != "bye\n" {
		t.Fatal("the command did not run")
	}
	p.send(`{"id":"2","type":"undo"}`)
	resp, _ := p.response()
	res := undoResult(t, resp)
	want := map[string]string{"f.txt": "restored", "new.txt": "removed", "notes.txt": "restored"}
	if fmt.Sprint(actions(res.Files)) != fmt.Sprint(want) {
		t.Errorf("undo: %s, want %v", resp.Data, want)
	}
	if fileText(t, filepath.Join(dir, "f.txt")) != "hello\n" || fileText(t, filepath.Join(dir, "notes.txt")) != "untracked\n" || fileText(t, filepath.Join(dir, "new.txt")) != "<absent>" {
		t.Errorf("after the undo: f %q notes %q new %q", fileText(t, filepath.Join(dir, "f.txt")), fileText(t, filepath.Join(dir, "notes.txt")), fileText(t, filepath.Join(dir, "new.txt")))
	}
}

// TestUndoOverACP: _zot/session/undo undoes the last turn; a turn the
// session does not have is invalid_params on turn; an outside change is
// changed_outside with data.file naming the file; /undo in a prompt undoes
// the turn left.
func TestUndoOverACP(t *testing.T) {
	home := doorDir(t)
	work := t.TempDir()
	s := script(t, map[string]any{"turns": []any{
		turnOf(toolStep("write", map[string]any{"path": "a.txt", "content": "one"})),
		turnOf(toolStep("write", map[string]any{"path": "b.txt", "content": "two"})),
	}})
	a := startACPProc(t, home, "--provider", "scripted", "--script", s, "--permission", "allow")
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work), "")))
	for i, text := range []string{"first", "second"} {
		if f, _ := p.call(fmt.Sprint(3+i), "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, id, text), ""); f.Error != nil {
			t.Fatalf("prompt: %s", f.raw)
		}
	}
	f, _ := p.call("5", "_zot/session/undo", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	var res struct {
		Turn         int64            `json:"turn"`
		MessageCount int64            `json:"messageCount"`
		Files        []map[string]any `json:"files"`
		BranchID     string           `json:"branchId"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &res) != nil || res.Turn != 2 || len(res.Files) != 1 || res.Files[0]["action"] != "removed" {
		t.Fatalf("_zot/session/undo: %s", f.raw)
	}
	// The undone turn is kept as a stored session forked at it.
	branch, err := os.ReadFile(filepath.Join(home, "sessions", res.BranchID+".jsonl"))
	if res.BranchID == "" || err != nil || !strings.Contains(string(branch), `"second"`) || !strings.Contains(string(branch), id) {
		t.Errorf("the branch %q keeping the undone turn: %v\n%s", res.BranchID, err, branch)
	}
	if fileText(t, filepath.Join(work, "b.txt")) != "<absent>" || fileText(t, filepath.Join(work, "a.txt")) != "one" {
		t.Errorf("after the undo: a %q b %q", fileText(t, filepath.Join(work, "a.txt")), fileText(t, filepath.Join(work, "b.txt")))
	}
	f, _ = p.call("6", "_zot/session/undo", fmt.Sprintf(`{"sessionId":%q,"turn":5}`, id), "")
	if f.Error == nil || f.Error.Code != -32602 || f.Error.Data["field"] != "turn" {
		t.Errorf("undo of a turn the session lacks: %s", f.raw)
	}
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("by hand"), 0o644)
	f, _ = p.call("7", "_zot/session/undo", fmt.Sprintf(`{"sessionId":%q}`, id), "")
	if f.Error == nil || f.Error.Data["kind"] != "changed_outside" || f.Error.Data["file"] != filepath.Join(work, "a.txt") || f.Error.Data["sessionId"] != id {
		t.Errorf("undo after an outside change: %s", f.raw)
	}
	if fileText(t, filepath.Join(work, "a.txt")) != "by hand" {
		t.Error("a refused undo restored a.txt")
	}
	// Put back as zot left it, /undo in a prompt undoes turn 1.
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("one"), 0o644)
	f, before := p.call("8", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/undo"}]}`, id), "")
	if f.Error != nil || !strings.Contains(chunkText(before, "agent_message_chunk"), "a.txt: removed") || fileText(t, filepath.Join(work, "a.txt")) != "<absent>" {
		t.Errorf("/undo: %s %q", f.raw, chunkText(before, "agent_message_chunk"))
	}
	a.stdin.Close()
	if err := endOf(t, a.cmd, a.stderr); err != nil {
		t.Errorf("zot acp: %v\n%s", err, a.stderr)
	}
}

// TestSessionsUndoCLI: two print-mode runs of one stored session change
// files; the checkpoints live beside the session; zot sessions undo
// --turn 2 undoes the second, zot sessions undo the first, and then there
// is nothing to undo; zot sessions rm removes the checkpoints with the
// session.
func TestSessionsUndoCLI(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	os.MkdirAll(work, 0o755)
	env := []string{"ZOT_HOME=" + home}
	for i, name := range []string{"a.txt", "b.txt"} {
		s := script(t, map[string]any{"turns": []any{turnOf(toolStep("write", map[string]any{"path": name, "content": name}))}})
		if out, errOut, code := runZot(t, "", env, "-p", fmt.Sprintf("write %d", i), "--provider", "scripted", "--cwd", work, "--script", s, "--continue"); code != 0 {
			t.Fatalf("zot -p: exit %d\n%s%s", code, out, errOut)
		}
	}
	out, errOut, code := runZot(t, "", env, "sessions", "list", "--json")
	var list []struct {
		ID        string `json:"id"`
		Messages  int    `json:"message_count"`
		Parent    string `json:"parent_id"`
		ForkIndex *int   `json:"fork_index"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Fatalf("zot sessions list: exit %d %s%s", code, out, errOut)
	}
	id := list[0].ID
	if _, err := os.Stat(filepath.Join(home, "sessions", ".checkpoints", id, "log.ndjson")); err != nil {
		t.Errorf("no checkpoints beside the session: %v", err)
	}
	out, errOut, code = runZot(t, "", env, "sessions", "undo", id, "--turn", "2", "--json")
	var res wire.UndoResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Turn != 2 || actions(res.Files)["b.txt"] != "removed" {
		t.Fatalf("zot sessions undo --turn 2: exit %d %s%s", code, out, errOut)
	}
	if fileText(t, filepath.Join(work, "b.txt")) != "<absent>" || fileText(t, filepath.Join(work, "a.txt")) != "a.txt" {
		t.Errorf("after undoing turn 2: b %q", fileText(t, filepath.Join(work, "b.txt")))
	}
	full := list[0].Messages
	// The undone turn is kept as a branch: a fork of the session at the
	// undone turn, holding the whole transcript as it was.
	out, _, _ = runZot(t, "", env, "sessions", "list", "--json")
	list = nil
	if json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || res.BranchID == "" {
		t.Fatalf("the sessions after the undo: %s (branch %q)", out, res.BranchID)
	}
	for _, e := range list {
		switch e.ID {
		case id:
			if int64(e.Messages) != res.MessageCount {
				t.Errorf("the transcript after the undo: %d messages, want %d", e.Messages, res.MessageCount)
			}
		case res.BranchID:
			if e.Parent != id || e.ForkIndex == nil || int64(*e.ForkIndex) != res.MessageCount || e.Messages != full {
				t.Errorf("the branch keeping the undone turn: %+v, want parent %s at %d with %d messages", e, id, res.MessageCount, full)
			}
		default:
			t.Errorf("an unknown session after the undo: %+v", e)
		}
	}
	out, errOut, code = runZot(t, "", env, "sessions", "undo", id[:len(id)-4])
	if code != 0 || !strings.Contains(out, "Turn 1 and after were undone") || !strings.Contains(out, "a.txt: removed") {
		t.Errorf("zot sessions undo: exit %d %s%s", code, out, errOut)
	}
	if fileText(t, filepath.Join(work, "a.txt")) != "<absent>" {
		t.Error("a.txt is still there")
	}
	_, errOut, code = runZot(t, "", env, "sessions", "undo", id)
	if code != 1 || !strings.Contains(errOut, "nothing to undo") {
		t.Errorf("undo with no turn left: exit %d %s", code, errOut)
	}
	// A new turn records again; removing the session removes its
	// checkpoints.
	s := script(t, map[string]any{"turns": []any{turnOf(toolStep("write", map[string]any{"path": "c.txt", "content": "c"}))}})
	if out, errOut, code := runZot(t, "", env, "-p", "again", "--provider", "scripted", "--cwd", work, "--script", s, "--session", id); code != 0 {
		t.Fatalf("zot -p --session: exit %d\n%s%s", code, out, errOut)
	}
	ck := filepath.Join(home, "sessions", ".checkpoints", id)
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("no checkpoints after a new turn: %v", err)
	}
	if out, errOut, code := runZot(t, "", env, "sessions", "rm", id); code != 0 {
		t.Fatalf("zot sessions rm: exit %d %s%s", code, out, errOut)
	}
	if _, err := os.Stat(ck); !os.IsNotExist(err) {
		t.Errorf("the checkpoints outlived their session: %v", err)
	}
}

// TestUndoRefusedThroughPlantedSymlink: after a turn edits sub/keep.txt
// and writes sub/new.txt, sub is replaced by a symbolic link to a folder
// elsewhere holding the same contents. The undo is refused with
// changed_outside naming the file, and writes and removes nothing there:
// it never follows a link planted since to a folder zot did not record.
func TestUndoRefusedThroughPlantedSymlink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "keep.txt"), []byte("v1\n"), 0o644)
	s := script(t, map[string]any{"turns": []any{
		turnOf(toolStep("edit", map[string]any{"path": "sub/keep.txt", "edits": []any{map[string]any{"oldText": "v1", "newText": "v2"}}}), toolStep("write", map[string]any{"path": "sub/new.txt", "content": "new"})),
	}})
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	promptDone(t, p, "1", "go")
	if fileText(t, filepath.Join(sub, "keep.txt")) != "v2\n" || fileText(t, filepath.Join(sub, "new.txt")) != "new" {
		t.Fatal("the turn did not run")
	}
	// sub moves elsewhere, contents and all, and a link takes its place.
	for _, name := range []string{"keep.txt", "new.txt"} {
		os.WriteFile(filepath.Join(elsewhere, name), []byte(fileText(t, filepath.Join(sub, name))), 0o644)
	}
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, sub); err != nil {
		t.Fatal(err)
	}
	p.send(`{"id":"2","type":"undo"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "undo", false, wire.CodeChangedOutside)
	if !strings.Contains(resp.Error, filepath.Join(sub, "keep.txt")) && !strings.Contains(resp.Error, filepath.Join(sub, "new.txt")) {
		t.Errorf("the refusal names no file: %s", resp.Error)
	}
	if k, n := fileText(t, filepath.Join(elsewhere, "keep.txt")), fileText(t, filepath.Join(elsewhere, "new.txt")); k != "v2\n" || n != "new" {
		t.Errorf("the undo wrote through the link: keep %q new %q", k, n)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d: %s", code, p.stderr)
	}
}
