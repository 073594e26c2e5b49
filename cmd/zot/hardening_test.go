package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// resultTexts returns the tool_result events among evs and the text of
// each.
func resultTexts(evs []wire.Event) ([]*wire.ToolResultEvent, []string) {
	var out []*wire.ToolResultEvent
	var texts []string
	for _, e := range evs {
		if r, ok := e.(*wire.ToolResultEvent); ok {
			var sb strings.Builder
			for _, b := range r.Content {
				if t, ok := b.(*wire.TextBlock); ok {
					sb.WriteString(t.Text)
				}
			}
			out = append(out, r)
			texts = append(texts, sb.String())
		}
	}
	return out, texts
}

// oneToolCall is a script whose first prompt calls one tool with raw
// arguments and then answers "ok"; later prompts echo.
func oneToolCall(t *testing.T, name, rawArgs string) string {
	return script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "c1", "name": name, "args_raw": rawArgs}}},
			map[string]any{"text": "ok"},
		}},
		map[string]any{"steps": []any{map[string]any{"echo": true}}},
	}})
}

// runPrompt starts zot rpc with args, sends one prompt and returns its
// events, leaving the process running.
func runPrompt(t *testing.T, env []string, message string, args ...string) (*proc, []wire.Event) {
	t.Helper()
	p := start(t, env, args...)
	line, _ := json.Marshal(map[string]any{"id": "1", "type": "prompt", "message": message})
	p.send(string(line))
	if r, _ := p.response(); !r.Success {
		t.Fatalf("prompt refused: %s", r.Error)
	}
	return p, p.untilDone()
}

// messageCount asks get_state for the transcript's length.
func messageCount(t *testing.T, p *proc) int64 {
	t.Helper()
	p.send(`{"id":"s","type":"get_state"}`)
	r, _ := p.response()
	res, err := r.Result()
	if err != nil || res == nil {
		t.Fatalf("get_state: %v %s", err, r.Error)
	}
	return res.(*wire.StateResult).MessageCount
}

// TestTornSessionFileThroughTheBinary: a session file whose last line was
// torn (a crash mid-write) loads, the torn bytes are cut away before the
// next message is appended, and every later resume reads the whole
// transcript; a file cut after a tool call, before its result, loads too,
// the call answered with an error result.
func TestTornSessionFileThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	echo := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"echo": true}}}}})
	args := []string{"rpc", "--provider", "scripted", "--cwd", dir, "--script", echo, "--session", file}
	p, _ := runPrompt(t, nil, "first words", args...)
	if code := p.exit(); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"torn`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p, _ = runPrompt(t, nil, "second words", args...)
	if n := messageCount(t, p); n != 4 {
		t.Errorf("after the torn line: %d messages, want 4", n)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", code, p.stderr.String())
	}
	data, _ := os.ReadFile(file)
	if bytes.Contains(data, []byte(`"torn`)) || !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("the torn line is still in the file, or the file does not end a line:\n%s", data)
	}
	p, _ = runPrompt(t, nil, "third words", args...)
	if n := messageCount(t, p); n != 6 {
		t.Errorf("third run: %d messages, want 6", n)
	}
	p.exit()

	// Cut after the assistant's tool call: its result never reached the file.
	cut := filepath.Join(dir, "cut.jsonl")
	tool := oneToolCall(t, "ls", `{}`)
	p, _ = runPrompt(t, nil, "list", "rpc", "--provider", "scripted", "--cwd", dir, "--script", tool, "--session", cut)
	p.exit()
	data, err = os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	keep := -1
	for i, l := range lines {
		if strings.Contains(l, `"tool_call"`) && strings.Contains(l, `"c1"`) {
			keep = i + 1
			break
		}
	}
	if keep < 0 {
		t.Fatalf("no line with the tool call in:\n%s", data)
	}
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:keep], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	p, evs := runPrompt(t, nil, "again", "rpc", "--provider", "scripted", "--cwd", dir, "--script", echo, "--session", cut)
	if _, ok := evs[len(evs)-1].(*wire.DoneEvent); !ok {
		t.Fatalf("the prompt after the cut did not end with done: %v", types(evs))
	}
	p.send(`{"id":"m","type":"get_messages"}`)
	r, _ := p.response()
	if !bytes.Contains(r.Data, []byte(`{"type":"tool_result","call_id":"c1","is_error":true`)) {
		t.Errorf("the cut tool call got no error result:\n%s", r.Data)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// TestClearRewritesTheSessionFile: clear replaces the session file (a new
// file renamed over the old one), so the old text leaves the disk and the
// file shrinks; what comes after is appended to the new file.
func TestClearRewritesTheSessionFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	echo := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"echo": true}}}}})
	secret := strings.Repeat("private words ", 200)
	p, _ := runPrompt(t, nil, secret, "rpc", "--provider", "scripted", "--cwd", dir, "--script", echo, "--session", file)
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	p.send(`{"id":"c","type":"clear"}`)
	if r, _ := p.response(); !r.Success {
		t.Fatalf("clear: %s", r.Error)
	}
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if bytes.Contains(data, []byte("private words")) || after.Size() >= before.Size() {
		t.Errorf("after clear the file is %d bytes (was %d) and holds the old text: %v", after.Size(), before.Size(), bytes.Contains(data, []byte("private words")))
	}
	if before.Sys().(*syscall.Stat_t).Ino == after.Sys().(*syscall.Stat_t).Ino {
		t.Errorf("clear wrote over the file in place instead of replacing it")
	}
	p.send(`{"id":"2","type":"prompt","message":"after clear"}`)
	p.response()
	p.untilDone()
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	data, _ = os.ReadFile(file)
	if !bytes.Contains(data, []byte("after clear")) || bytes.Contains(data, []byte("private words")) {
		t.Errorf("the file after clear and a prompt:\n%s", data)
	}
}

// TestRepeatedToolArgumentsAreRefused: a tool call whose arguments give
// a name twice is reported as the model sent it and answered with an
// invalid-arguments error; the tool does not run with either value.
func TestRepeatedToolArgumentsAreRefused(t *testing.T) {
	dir := t.TempDir()
	s := oneToolCall(t, "write", `{"path":"a.txt","content":"x","path":"b.txt"}`)
	p, evs := runPrompt(t, nil, "write", "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	p.exit()
	var call *wire.ToolCallEvent
	for _, e := range evs {
		if c, ok := e.(*wire.ToolCallEvent); ok {
			call = c
		}
	}
	if call == nil || call.Name != "write" {
		t.Fatalf("no tool_call event: %v", types(evs))
	}
	results, texts := resultTexts(evs)
	if len(results) != 1 || !results[0].IsError || !strings.Contains(texts[0], `"path" twice`) {
		t.Fatalf("result %v: %q; want an error naming the repeated field", len(results), texts)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

// TestBashSeesNoCredentialsThroughTheBinary: zot started with provider
// keys in its environment runs bash without them: env, printenv and set
// show neither the names nor the values.
func TestBashSeesNoCredentialsThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	const value = "sk-do-not-show-4242"
	s := oneToolCall(t, "bash", `{"command":"env; printenv; set"}`)
	env := []string{"ANTHROPIC_API_KEY=" + value, "OPENAI_API_KEY=" + value, "GEMINI_API_KEY=" + value, "GOOGLE_API_KEY=" + value}
	p, evs := runPrompt(t, env, "env", "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	p.exit()
	results, texts := resultTexts(evs)
	if len(results) != 1 || results[0].IsError || !strings.Contains(texts[0], "PATH=") {
		t.Fatalf("bash did not list its environment: %q", texts)
	}
	for _, bad := range []string{value, "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		if strings.Contains(texts[0], bad) {
			t.Errorf("bash's output shows %s", bad)
		}
	}
}

// TestBashSpillLivesWithTheProcess: output too long to show is kept in a
// spill file the result names; the file is there while zot runs and gone
// once it has exited.
func TestBashSpillLivesWithTheProcess(t *testing.T) {
	dir := t.TempDir()
	s := oneToolCall(t, "bash", `{"command":"seq 1 200000"}`)
	p, evs := runPrompt(t, []string{"TMPDIR=" + dir}, "count", "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	_, texts := resultTexts(evs)
	if len(texts) != 1 {
		t.Fatalf("%d tool results", len(texts))
	}
	m := regexp.MustCompile(`full output \(\d+ bytes\) saved to (\S+) `).FindStringSubmatch(texts[0])
	if m == nil {
		t.Fatalf("the result names no spill file:\n%.600s", texts[0])
	}
	spill := m[1]
	data, err := os.ReadFile(spill)
	if err != nil || !bytes.HasPrefix(data, []byte("1\n2\n")) || !bytes.HasSuffix(data, []byte("200000\n")) {
		t.Fatalf("spill file %s while zot runs: %d bytes, %v", spill, len(data), err)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(spill); !os.IsNotExist(err) {
		t.Errorf("spill file %s left after zot exited: %v", spill, err)
	}
}

// TestReadRefusesANamedPipeThroughTheBinary: read on a named pipe no one
// writes to answers at once with an error naming what the file is,
// instead of waiting on it, and the prompt ends.
func TestReadRefusesANamedPipeThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := oneToolCall(t, "read", `{"path":"pipe"}`)
	p, evs := runPrompt(t, nil, "read", "rpc", "--provider", "scripted", "--cwd", dir, "--script", s)
	p.exit()
	results, texts := resultTexts(evs)
	if len(results) != 1 || !results[0].IsError || !strings.Contains(texts[0], "named pipe") {
		t.Fatalf("read on a named pipe: %q", texts)
	}
}

// TestWriteAsAnotherUserThroughTheBinary: zot run as a user who may
// create and rename files in a directory, but not write a file root owns
// there, refuses to write or edit that file (replacing it by a rename
// would get round its permissions) and leaves it as it was.
func TestWriteAsAnotherUserThroughTheBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running zot as another user needs root")
	}
	const nobody = 65534
	shared, err := os.MkdirTemp("", "zot-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(shared, "zot")
	data, err := os.ReadFile(zotBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(shared, "root.txt")
	if err := os.WriteFile(file, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{
			map[string]any{"id": "w", "name": "write", "args": map[string]any{"path": "root.txt", "content": "replaced\n"}},
			map[string]any{"id": "e", "name": "edit", "args": map[string]any{"path": "root.txt", "edits": []any{map[string]any{"old_text": "original", "new_text": "edited"}}}},
		}},
		map[string]any{"text": "ok"},
	}}}})
	sharedScript := filepath.Join(shared, "script.json")
	scriptData, _ := os.ReadFile(s)
	if err := os.WriteFile(sharedScript, scriptData, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", "change it", "--json", "--no-session", "--provider", "scripted", "--cwd", shared, "--script", sharedScript)
	cmd.Env = append(cleanEnv(), "ZOT_HOME="+filepath.Join(shared, "home"), "HOME="+shared)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot as nobody: %v\n%s", err, out)
	}
	var denied int
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.Contains(line, []byte(`"type":"tool_result"`)) && bytes.Contains(line, []byte(`"is_error":true`)) &&
			bytes.Contains(line, []byte("cannot write root.txt")) && bytes.Contains(line, []byte("permission denied")) {
			denied++
		}
	}
	if denied != 2 {
		t.Errorf("%d of write and edit refused with permission denied:\n%s", denied, out)
	}
	got, _ := os.ReadFile(file)
	st, _ := os.Stat(file)
	if string(got) != "original\n" || st.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("root.txt is now %q, owned by %d", got, st.Sys().(*syscall.Stat_t).Uid)
	}
}

// TestCompactionReportsUsageOnceThroughTheBinary: a compaction that needs
// several summarising calls (chunks, then a merge) reports one usage
// event, before compact_done, whether a prompt's end started it or the
// compact command asked for it.
func TestCompactionReportsUsageOnceThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	models := filepath.Join(dir, "models.json")
	if err := os.WriteFile(models, []byte(`{"models":[{"id":"tiny","provider":"scripted","context_window":4000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	echo := func(input int) any {
		return map[string]any{"steps": []any{map[string]any{"echo": true, "usage": map[string]any{"input": input, "output": 10}}}}
	}
	// A summarising call is a transcript of one prompt, so the first turn
	// answers it; the fifth prompt fills the 4,000-token window.
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{map[string]any{"text": "SUMMARY", "usage": map[string]any{"input": 900, "output": 30}}}},
		echo(100), echo(100), echo(100), echo(3900),
	}})
	long := strings.Repeat("word ", 300)
	for _, auto := range []bool{true, false} {
		args := []string{"rpc", "--provider", "scripted", "--model", "tiny", "--models-file", models, "--cwd", dir, "--script", s}
		if !auto {
			args = append(args, "--no-auto-compact")
		}
		p := start(t, nil, args...)
		var evs []wire.Event
		for i := 1; i <= 5; i++ {
			line, _ := json.Marshal(map[string]any{"id": i, "type": "prompt", "message": long})
			p.send(string(line))
			p.response()
			evs = p.untilDone()
		}
		if !auto {
			p.send(`{"id":"c","type":"compact"}`)
			p.response()
			evs = p.untilDone()
		}
		p.exit()
		usages, compacted := 0, false
		var last *wire.UsageEvent
		for i, e := range evs {
			switch e := e.(type) {
			case *wire.AssistantMessageEvent:
				usages = 0 // the usage events of the prompt's own call come before its message
			case *wire.UsageEvent:
				usages++
				last = e
			case *wire.CompactDoneEvent:
				compacted = true
				if _, ok := evs[i-1].(*wire.UsageEvent); !ok {
					t.Errorf("auto %v: compact_done not right after a usage event: %v", auto, types(evs))
				}
			}
		}
		if !compacted || usages != 1 {
			t.Errorf("auto %v: compacted %v with %d usage events, want one: %v", auto, compacted, usages, types(evs))
		} else if last.Input < 3*900 || last.Input%900 != 0 {
			// Each summarising call reports 900 input tokens.
			t.Errorf("auto %v: the compaction's usage counts %d input tokens, not the sum of three calls or more", auto, last.Input)
		}
	}
}
