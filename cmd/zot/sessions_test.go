package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// listedSession is an entry of `zot sessions list --json`.
type listedSession struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	CWD      string    `json:"cwd"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Messages int       `json:"message_count"`
	Model    string    `json:"model"`
	Error    string    `json:"error"`
	Path     string    `json:"path"`
}

// listSessionsJSON runs `zot sessions list --json` (with more args) under
// home and decodes its answer.
func listSessionsJSON(t *testing.T, home string, args ...string) []listedSession {
	t.Helper()
	out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, home, append([]string{"sessions", "list", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("zot sessions list: exit %d\n%s", code, errOut)
	}
	var list []listedSession
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("zot sessions list --json: %v\n%s", err, out)
	}
	return list
}

// printContinue runs `zot -p PROMPT --continue` in cwd under home.
func printContinue(t *testing.T, home, cwd, prompt string) {
	t.Helper()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, cwd, "-p", prompt, "--provider", "scripted", "--script", s, "--cwd", cwd, "--continue")
	if code != 0 {
		t.Fatalf("zot -p --continue in %s: exit %d\n%s%s", cwd, code, out, errOut)
	}
}

// TestSessionsListAndShow: sessions print mode keeps are listed newest
// first, by folder, and shown by id or by the start of one.
func TestSessionsListAndShow(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.MkdirAll(a, 0o700)
	os.MkdirAll(b, 0o700)
	printContinue(t, home, a, "first in a")
	printContinue(t, home, b, "only in b")
	time.Sleep(20 * time.Millisecond) // a later modification time than b's
	printContinue(t, home, a, "second in a")

	list := listSessionsJSON(t, home)
	if len(list) != 2 || list[0].CWD != a || list[1].CWD != b {
		t.Fatalf("list: %+v", list)
	}
	if list[0].Messages != 4 || list[0].Title != "first in a" || list[0].Created.IsZero() || list[0].Model == "" {
		t.Errorf("a's entry: %+v", list[0])
	}
	if got := listSessionsJSON(t, home, "--cwd", b); len(got) != 1 || got[0].Title != "only in b" {
		t.Errorf("--cwd b: %+v", got)
	}
	out, _, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "list")
	if code != 0 || !strings.Contains(out, list[0].ID) || !strings.Contains(out, "only in b") || strings.Index(out, list[0].ID) > strings.Index(out, list[1].ID) {
		t.Errorf("zot sessions list: exit %d\n%s", code, out)
	}

	out, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "show", list[0].ID, "--json")
	var shown struct {
		listedSession
		Transcript []struct {
			Role    string `json:"role"`
			Content []struct {
				Type, Text string
			} `json:"content"`
		} `json:"transcript"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil {
		t.Fatalf("show --json: exit %d\n%s%s", code, out, errOut)
	}
	if shown.ID != list[0].ID || len(shown.Transcript) != 4 || shown.Transcript[2].Content[0].Text != "second in a" {
		t.Errorf("show --json: %s", out)
	}
	out, _, code = runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "show", list[1].ID[:len(list[1].ID)-4])
	if code != 0 || !strings.Contains(out, "only in b") || !strings.Contains(out, "[assistant]\nok") {
		t.Errorf("show by the start of an id: exit %d\n%s", code, out)
	}
	_, errOut, code = runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "show", "nope")
	if code != 1 || !strings.Contains(errOut, `no session "nope"`) {
		t.Errorf("show of no session: exit %d %q", code, errOut)
	}
	_, errOut, code = runExt(t, []string{"ZOT_HOME=" + home}, root, "sessions", "show", list[0].ID, "--provider", "openai")
	if code != 2 || !strings.Contains(errOut, "--provider does not apply") {
		t.Errorf("a flag that does nothing: exit %d %q", code, errOut)
	}

	// --session takes a stored session's id.
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	if _, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "-p", "third", "--provider", "scripted", "--script", s, "--session", list[1].ID); code != 0 {
		t.Fatalf("--session ID: exit %d %s", code, errOut)
	}
	if got := listSessionsJSON(t, home, "--cwd", b); len(got) != 1 || got[0].Messages != 4 {
		t.Errorf("after --session %s: %+v", list[1].ID, got)
	}
}

// writeOldPrintSession writes a session the way print mode's --continue
// wrote it before the one layout: sessions/<folder key>/<time>.jsonl,
// through internal/sessionfile.
func writeOldPrintSession(t *testing.T, home, cwd, stamp, prompt string) string {
	t.Helper()
	path := filepath.Join(sessionfile.DirFor(home, cwd), stamp+".jsonl")
	f, _, err := sessionfile.Open(path, sessionfile.Options{CWD: cwd})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.TextBlock{Text: prompt}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: "ok"}}},
	}
	if err := f.Save(msgs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSessionsMigrateOldLayouts: print mode's old folders and the
// daemon's files are listed together after the first run, byte for byte
// what they were, and --continue resumes a moved session.
func TestSessionsMigrateOldLayouts(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o700)
	old := writeOldPrintSession(t, home, proj, "20250101T000000Z", "old print question")
	other := writeOldPrintSession(t, home, filepath.Join(root, "other"), "20250102T000000Z", "other folder")
	daemonFile := filepath.Join(home, "sessions", "20250103T000000Z-0123456789abcdef.jsonl")
	daemonBody := fmt.Sprintf(`{"session":{"version":1,"cwd":%q,"created":"2025-01-03T00:00:00Z"}}`+"\n"+
		`{"role":"user","time":"2025-01-03T00:00:00Z","content":[{"type":"text","text":"daemon question"}]}`+"\n", proj)
	os.WriteFile(daemonFile, []byte(daemonBody), 0o600)
	bodies := map[string]string{}
	for _, p := range []string{old, other, daemonFile} {
		b, _ := os.ReadFile(p)
		bodies[string(b)] = p
	}

	list := listSessionsJSON(t, home)
	if len(list) != 3 {
		t.Fatalf("list after moving: %+v", list)
	}
	for _, e := range list {
		b, err := os.ReadFile(e.Path)
		if err != nil || bodies[string(b)] == "" || filepath.Dir(e.Path) != filepath.Join(home, "sessions") {
			t.Errorf("%s: %v, not one of the old files byte for byte", e.Path, err)
		}
	}
	for _, p := range []string{old, other} {
		if _, err := os.Stat(filepath.Dir(p)); err == nil {
			t.Errorf("old folder %s left", filepath.Dir(p))
		}
	}
	// --continue in proj resumes its newest session: the daemon's, whose
	// file is newest; the moved one is kept.
	os.Chtimes(daemonFile, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	printContinue(t, home, proj, "again")
	got := listSessionsJSON(t, home, "--cwd", proj)
	if len(got) != 2 || got[0].Title != "old print question" || got[0].Messages != 4 {
		t.Errorf("proj's sessions after --continue: %+v", got)
	}
}

// TestSessionsIndexSurvivesDamage: a damaged index, a temporary file of
// a writer that was killed, and listings killed at random moments leave
// a store that lists every session, and an index that is whole again.
func TestSessionsIndexSurvivesDamage(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dir := filepath.Join(home, "sessions")
	os.MkdirAll(dir, 0o700)
	const n = 40
	for i := range n {
		body := fmt.Sprintf(`{"session":{"version":1,"cwd":"/w/%d","created":"2025-01-01T00:00:00Z"}}`+"\n"+
			`{"role":"user","time":"2025-01-01T00:00:00Z","content":[{"type":"text","text":"q%d"}]}`+"\n", i, i)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%03d.jsonl", i)), []byte(body), 0o600)
	}
	index := filepath.Join(dir, "index.json")
	os.WriteFile(index, []byte(`{"version":1,"sessions":[{"id":"s000","message_cou`), 0o600)
	os.WriteFile(filepath.Join(dir, ".index.json.123.tmp"), []byte(`{"version":1,"sess`), 0o600)
	if got := listSessionsJSON(t, home); len(got) != n {
		t.Fatalf("with a damaged index: %d sessions", len(got))
	}
	checkIndex(t, index, n)

	// Listings killed at once, or a little later, while files change.
	for i := range 12 {
		os.WriteFile(index, []byte("garbage"), 0o600)
		f, _ := os.OpenFile(filepath.Join(dir, fmt.Sprintf("s%03d.jsonl", i)), os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintf(f, `{"role":"assistant","time":"2025-01-01T00:00:00Z","content":[{"type":"text","text":"a"}]}`+"\n")
		f.Close()
		cmd := exec.Command(zotBin, "sessions", "list")
		cmd.Env = append(cleanEnv(), "ZOT_HOME="+home)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i*4) * time.Millisecond) // before zot reads anything, and while it writes the index
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	got := listSessionsJSON(t, home)
	if len(got) != n {
		t.Fatalf("after killed listings: %d sessions", len(got))
	}
	for _, e := range got {
		var i int
		fmt.Sscanf(e.ID, "s%03d", &i)
		if want := 1 + btoi(i < 12); e.Messages != want {
			t.Errorf("%s: %d messages, want %d", e.ID, e.Messages, want)
		}
	}
	checkIndex(t, index, n)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkIndex checks that the index at path decodes and lists n sessions.
func checkIndex(t *testing.T, path string, n int) {
	t.Helper()
	var idx struct {
		Sessions []listedSession `json:"sessions"`
	}
	data, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(data, &idx) != nil || len(idx.Sessions) != n {
		t.Errorf("index: %v, %d sessions, want %d: %.200s", err, len(idx.Sessions), n, data)
	}
}

// TestSessionsWritersAtOnce: print-mode runs in several folders and
// listings at the same moment all keep their sessions, and the index
// they leave lists each of them.
func TestSessionsWritersAtOnce(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	const n = 6
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	run := func(args ...string) {
		defer wg.Done()
		cmd := exec.Command(zotBin, args...)
		cmd.Env = append(cleanEnv(), "ZOT_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs <- fmt.Errorf("zot %v: %v\n%s", args, err, out)
		}
	}
	for i := range n {
		cwd := filepath.Join(root, fmt.Sprint("p", i))
		os.MkdirAll(cwd, 0o700)
		wg.Add(2)
		go run("-p", "hello", "--provider", "scripted", "--script", s, "--cwd", cwd, "--continue")
		go run("sessions", "list", "--json")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list := listSessionsJSON(t, home)
	if len(list) != n {
		t.Fatalf("%d sessions after %d runs at once: %+v", len(list), n, list)
	}
	checkIndex(t, filepath.Join(home, "sessions", "index.json"), n)
}

// TestACPListsEverySession: session/list shows the daemon's sessions,
// print mode's, and those of print mode's old layout, which load; zot
// sessions list shows the same.
func TestACPListsEverySession(t *testing.T) {
	home := doorDir(t)
	root := t.TempDir()
	old, printed := filepath.Join(root, "old"), filepath.Join(root, "printed")
	os.MkdirAll(old, 0o700)
	os.MkdirAll(printed, 0o700)
	printContinue(t, home, printed, "from print mode")
	// Written after print mode ran: the daemon moves it in.
	writeOldPrintSession(t, home, old, "20250101T000000Z", "from the old layout")

	a := startACPProc(t, home, "--provider", "scripted")
	p := a.peer
	if f, _ := p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, ""); f.Error != nil {
		t.Fatalf("initialize: %s", f.raw)
	}
	id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, root), "")))
	if f, _ := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"from the daemon"}]}`, id), "allow_once"); f.Error != nil {
		t.Fatalf("prompt: %s", f.raw)
	}
	f, _ := p.call("4", "session/list", `{}`, "")
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			CWD       string `json:"cwd"`
			Title     string `json:"title"`
		} `json:"sessions"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &list) != nil {
		t.Fatalf("session/list: %s", f.raw)
	}
	byTitle := map[string]string{}
	for _, s := range list.Sessions {
		byTitle[s.Title] = s.SessionID
	}
	for _, want := range []string{"from the old layout", "from print mode", "from the daemon"} {
		if byTitle[want] == "" {
			t.Errorf("session/list lacks %q: %s", want, f.raw)
		}
	}
	if f, _ := p.call("5", "session/list", fmt.Sprintf(`{"cwd":%q}`, old), ""); !strings.Contains(string(f.Result), byTitle["from the old layout"]) || strings.Contains(string(f.Result), id) {
		t.Errorf("session/list of %s: %s", old, f.raw)
	}
	if f, _ := p.call("6", "session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, byTitle["from the old layout"], old), ""); f.Error != nil {
		t.Errorf("session/load of a moved session: %s", f.raw)
	}
	a.stdin.Close()
	if err := endOf(t, a.cmd, a.stderr); err != nil {
		t.Fatalf("zot acp: %v\n%s", err, a.stderr)
	}
	if got := listSessionsJSON(t, home); len(got) != 3 {
		t.Errorf("zot sessions list: %+v", got)
	}
}

// TestSessionsKilledWriter: a zot rpc --continue killed mid-answer leaves
// a session the store lists with every committed message, and the next
// --continue in that folder resumes it.
func TestSessionsKilledWriter(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	cwd := filepath.Join(root, "proj")
	os.MkdirAll(cwd, 0o700)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "First answer."}}},
		map[string]any{"steps": []any{map[string]any{"text": "a slow second answer that never ends in time", "chunk": 2, "delay_ms": 50}}},
	}})
	p := start(t, []string{"ZOT_HOME=" + home}, "rpc", "--provider", "scripted", "--cwd", cwd, "--script", s, "--continue")
	p.send(`{"id":"1","type":"prompt","message":"look"}`)
	p.response()
	p.untilDone()
	p.send(`{"id":"2","type":"prompt","message":"again"}`)
	p.response()
	p.until("text_delta")
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait()

	list := listSessionsJSON(t, home, "--cwd", cwd)
	if len(list) != 1 || list[0].Messages != 3 || list[0].Title != "look" || list[0].Error != "" {
		t.Fatalf("after the kill: %+v", list)
	}
	printContinue(t, home, cwd, "resumed")
	if got := listSessionsJSON(t, home, "--cwd", cwd); len(got) != 1 || got[0].ID != list[0].ID || got[0].Messages <= 3 {
		t.Errorf("after --continue: %+v", got)
	}
}

// TestSessionsOnlyWhenAsked: zot rpc and zot -p write no session
// without --continue or --session.
func TestSessionsOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	if _, errOut, code := runExt(t, []string{"ZOT_HOME=" + home}, root, "-p", "hi", "--provider", "scripted", "--script", s); code != 0 {
		t.Fatalf("zot -p: exit %d %s", code, errOut)
	}
	p := start(t, []string{"ZOT_HOME=" + home}, "rpc", "--provider", "scripted", "--cwd", root, "--script", s)
	p.send(`{"id":"1","type":"prompt","message":"hi"}`)
	p.response()
	p.untilDone()
	p.stdin.Close()
	if code := p.exit(); code != 0 {
		t.Fatalf("zot rpc: exit %d", code)
	}
	if files, _ := filepath.Glob(filepath.Join(home, "sessions", "*")); len(files) != 0 {
		t.Errorf("written without being asked: %v", files)
	}
}
