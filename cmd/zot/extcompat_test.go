package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// Extensions written against upstream zot's Go extension package, with
// only their import line naming zot.dev/zot/sdk/ext/compat
// (testdata/compat: hello, guard, todo and weather; together they use
// every name of that package), built and driven through `zot rpc` as a
// user would: commands, tool calls through the scripted provider,
// intercepts that block and rewrite, events, and a panel taking a burst
// of keys.

// buildCompat builds the test extensions, each into a folder of its own
// with its manifest, and returns the folders by name.
func buildCompat(t *testing.T) map[string]string {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	names := []string{"hello", "guard", "todo", "weather"}
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./testdata/compat/"+n)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("building the compat extensions: %v\n%s", err, out)
	}
	dirs := map[string]string{}
	for _, n := range names {
		dir := filepath.Join(root, n)
		writeExt(t, dir, `{"name":"`+n+`","version":"1.0.0","language":"go","exec":"./`+n+`"}`, nil)
		if err := os.Rename(filepath.Join(bin, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
		dirs[n] = dir
	}
	return dirs
}

func TestCompatExtensions(t *testing.T) {
	dirs := buildCompat(t)
	t.Run("hello", func(t *testing.T) { compatHello(t, dirs["hello"]) })
	t.Run("guard", func(t *testing.T) { compatGuard(t, dirs["guard"]) })
	t.Run("todo", func(t *testing.T) { compatTodo(t, dirs["todo"]) })
	t.Run("weather", func(t *testing.T) { compatWeather(t, dirs["weather"]) })
}

// runCompat runs a command and returns its result with the events read on
// the way.
func runCompat(t *testing.T, p *proc, id, name, args string) (wire.RunCommandResult, []wire.Event) {
	t.Helper()
	line := `{"id":"` + id + `","type":"run_command","name":"` + name + `"`
	if args != "" {
		line += `,"args":"` + args + `"`
	}
	r, evs := p.call(line + "}")
	return runCommandResult(t, r), evs
}

// commandUntil runs the command name until its text contains want (the
// handling of what zot sent before may still be under way), and returns
// the text.
func commandUntil(t *testing.T, p *proc, name, want string) string {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for i := 0; ; i++ {
		res, _ := runCompat(t, p, name+"-"+strconv.Itoa(i), name, "")
		if strings.Contains(res.Text, want) {
			return res.Text
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q never contained %q", name, res.Text, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func compatHello(t *testing.T, dir string) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "Hello, Ada!"}}}}})
	homeEnv, _ := zotHomeEnv(t)
	p := start(t, []string{homeEnv}, rpcArgs(t, "--script", s, "--ext", dir)...)

	res, _ := runCompat(t, p, "1", "hello", "Ada")
	if res.Action != wire.CommandActionPrompt || res.Text != "Say hello to Ada, in five words at most." || res.Started == nil || !*res.Started {
		t.Fatalf("hello: %+v", res)
	}
	p.untilDone()

	res, _ = runCompat(t, p, "2", "hello-info", "")
	for _, want := range []string{"protocol 1,", "provider scripted,", "kept in " + dir + " (data " + dir + ")"} {
		if res.Action != wire.CommandActionDisplay || !strings.Contains(res.Text, want) {
			t.Errorf("hello-info: %q lacks %q", res.Text, want)
		}
	}

	res, evs := runCompat(t, p, "3", "hello-draft", "Bob")
	if in := p.event("ext_insert", evs).(*wire.ExtInsertEvent); res.Action != wire.CommandActionInsert || in.Text != "Hello, Bob" {
		t.Errorf("hello-draft: %+v %+v", res, in)
	}

	res, evs = runCompat(t, p, "4", "hello-quiet", "all")
	if res.Action != wire.CommandActionNoop || res.Error != "" {
		t.Errorf("hello-quiet: %+v", res)
	}
	var notes []string
	for len(notes) < 2 {
		var ev wire.Event
		if len(evs) > 0 {
			ev, evs = evs[0], evs[1:]
		} else {
			ev = p.event("ext_notify", nil)
		}
		if n, ok := ev.(*wire.ExtNotifyEvent); ok {
			notes = append(notes, string(n.Level)+": "+n.Message)
		}
	}
	if got := strings.Join(notes, " | "); got != "success: hello, all | info: a level zot does not know" {
		t.Errorf("notices: %s", got)
	}

	res, _ = runCompat(t, p, "5", "hello-fail", "Zed")
	if res.Action != wire.CommandActionNoop || res.Error != `cannot greet "Zed": no such person` {
		t.Errorf("hello-fail: %+v", res)
	}
	res, _ = runCompat(t, p, "6", "hello-half", "")
	if res.Action != wire.CommandActionDisplay || res.Text != "greeted half of them" || res.Error != "the other half was out" {
		t.Errorf("hello-half: %+v", res)
	}
	res, _ = runCompat(t, p, "7", "hello-tool", "")
	if res.Action != wire.CommandActionNoop || !strings.Contains(res.Error, "cannot run the tool read ahead of a prompt") {
		t.Errorf("hello-tool: %+v", res)
	}
	// Registered in OnHello, named after the provider.
	res, _ = runCompat(t, p, "8", "hello-scripted", "")
	if res.Action != wire.CommandActionDisplay || res.Text != "hello, scripted" {
		t.Errorf("hello-scripted: %+v", res)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func compatGuard(t *testing.T, dir string) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{
				map[string]any{"name": "bash", "args": map[string]any{"command": "rm -rf /tmp/zot-compat-nothing-here"}},
				map[string]any{"name": "bash", "args": map[string]any{"command": "sudo echo guarded-ok"}},
				map[string]any{"name": "bash", "args": map[string]any{"command": "echo plain #raw"}},
			}},
			map[string]any{"text": "done: the key is sk-abc123"},
		}},
		map[string]any{"steps": []any{map[string]any{"text": "never said"}}},
	}})
	homeEnv, home := zotHomeEnv(t)
	p := start(t, []string{homeEnv}, rpcArgs(t, "--script", s, "--ext", dir)...)

	// A command first: the extension is up before the prompt.
	if res, _ := runCompat(t, p, "0", "guard-lock", "off"); res.Text != "locked: false" {
		t.Fatalf("guard-lock off: %+v", res)
	}
	r, _ := p.call(`{"id":"1","type":"prompt","message":"tidy up"}`)
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	results := toolResults(evs)
	if len(results) != 3 {
		t.Fatalf("tool results: %d", len(results))
	}
	if !results[0].IsError || !strings.Contains(resultText(results[0]), "guard: deleting from / is not allowed") {
		t.Errorf("rm -rf: %q (error %v)", resultText(results[0]), results[0].IsError)
	}
	if got := resultText(results[1]); results[1].IsError || !strings.Contains(got, "guarded-ok") {
		t.Errorf("sudo dropped: %q (error %v)", got, results[1].IsError)
	}
	if got := resultText(results[2]); results[2].IsError || !strings.Contains(got, "plain") {
		t.Errorf("a rewrite that is not an object is ignored: %q (error %v)", got, results[2].IsError)
	}
	var shown string
	for _, ev := range evs {
		if m, ok := ev.(*wire.AssistantMessageEvent); ok {
			for _, b := range m.Content {
				if tb, ok := b.(*wire.TextBlock); ok {
					shown += tb.Text
				}
			}
		}
	}
	if !strings.Contains(shown, "done: the key is [redacted]") || strings.Contains(shown, "sk-abc123") {
		t.Errorf("assistant text shown: %q", shown)
	}
	if n := p.event("ext_notify", evs).(*wire.ExtNotifyEvent); n.Extension != "guard" || n.Level != "warn" || !strings.Contains(n.Message, "guard refused: rm -rf") {
		t.Errorf("ext_notify: %+v", n)
	}

	// A locked workspace refuses the first model call of the next prompt.
	if res, _ := runCompat(t, p, "2", "guard-lock", ""); res.Text != "locked: true" {
		t.Fatalf("guard-lock: %+v", res)
	}
	r, _ = p.call(`{"id":"3","type":"prompt","message":"again"}`)
	wantResponse(t, r, "prompt", true, "")
	all := eventsJSON(t, p.untilDone())
	if !strings.Contains(all, "guard: the workspace is locked") || strings.Contains(all, "never said") {
		t.Errorf("the turn_start guard let the turn through:\n%s", all)
	}
	runCompat(t, p, "4", "guard-lock", "off")

	// Events are handled in order on one goroutine, commands each on
	// their own: ask until the last event is in.
	log := commandUntil(t, p, "guard-log", "turn_end errorturn blocked")
	prev := -1
	for _, want := range []string{
		"session_start",
		"turn_start 1",
		`tool_call true bash {"command":"rm -rf /tmp/zot-compat-nothing-here"}`,
		`tool_call true bash {"command":"sudo echo guarded-ok"}`,
		"turn_end tool_use",
		"turn_start 2",
		"assistant_message done: the key is",
		"turn_end end_turn",
		"turn_start 1",
		"turn_end errorturn blocked: guard: the workspace is locked",
	} {
		i := strings.Index(log[prev+1:], want)
		if i < 0 {
			t.Errorf("guard-log: %q missing or out of order in\n%s", want, log)
			break
		}
		prev += 1 + i
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	extLog, _ := os.ReadFile(filepath.Join(home, "logs", "ext-guard.log"))
	for _, want := range []string{
		"zot has no before_agent_start intercept",
		`zot does not emit the "tool_result" event`,
		`zot does not emit the "subagent_start" event`,
	} {
		if !strings.Contains(string(extLog), want) {
			t.Errorf("the guard's log lacks %q:\n%s", want, extLog)
		}
	}
}

func compatTodo(t *testing.T, dir string) {
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{
				map[string]any{"name": "todo", "args": map[string]any{"action": "add", "text": "buy milk"}},
				map[string]any{"name": "todo", "args": map[string]any{"action": "wipe"}},
			}},
			map[string]any{"text": "added"},
		}},
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "todo", "args": map[string]any{"action": "show"}}}},
			map[string]any{"text": "shown"},
		}},
	}})
	homeEnv, _ := zotHomeEnv(t)
	p := start(t, []string{homeEnv}, rpcArgs(t, "--script", s, "--ext", dir)...)

	res, evs := runCompat(t, p, "1", "todo", "")
	if res.Action != wire.CommandActionOpenPanel || res.Panel == nil || res.Panel.Lines[0] != "(nothing to do)" || res.Panel.Title != "Todos (0)" {
		t.Fatalf("empty panel: %+v", res)
	}
	p.event("panel_open", evs)

	r, _ := p.call(`{"id":"2","type":"prompt","message":"remind me to buy milk"}`)
	wantResponse(t, r, "prompt", true, "")
	results := toolResults(p.untilDone())
	if len(results) != 2 || results[0].IsError || resultText(results[0]) != "1. false buy milk" {
		t.Fatalf("todo add: %+v", results)
	}
	if !results[1].IsError || !strings.Contains(resultText(results[1]), "todo: the list can only be wiped by hand") {
		t.Errorf("todo wipe was not refused: %q", resultText(results[1]))
	}
	if data, err := os.ReadFile(filepath.Join(dir, "todos.json")); err != nil || !strings.Contains(string(data), `"text": "buy milk"`) {
		t.Fatalf("todos.json in the data folder: %s %v", data, err)
	}

	// A burst of keys, sent without waiting for answers, is applied in
	// the order sent: every redraw shows the draft one character longer.
	text := "call the plumber at nine, then the bank"
	for i, c := range text {
		p.send(`{"id":"k` + strconv.Itoa(i) + `","type":"panel_key","panel_id":"todo-main","key":"rune","text":"` + string(c) + `"}`)
	}
	p.send(`{"id":"enter","type":"panel_key","panel_id":"todo-main","key":"enter"}`)
	var renders []*wire.PanelRenderEvent
	answered := 0
	for answered < len(text)+1 || len(renders) < len(text)+1 {
		f := p.next()
		if f.resp != nil {
			wantResponse(t, f.resp, "panel_key", true, "")
			answered++
			continue
		}
		if pr, ok := f.ev.(*wire.PanelRenderEvent); ok {
			renders = append(renders, pr)
		}
	}
	for i, pr := range renders[:len(text)] {
		if want := "> " + text[:i+1]; pr.Lines[len(pr.Lines)-1] != want {
			t.Fatalf("render %d: draft %q, want %q (keys applied out of order)", i, pr.Lines[len(pr.Lines)-1], want)
		}
	}
	if last := renders[len(text)]; strings.Join(last.Lines, "|") != "  □ buy milk|▸ □ "+text+"|> " || last.Title != "Todos (2)" {
		t.Fatalf("after enter: %q %q", last.Title, last.Lines)
	}

	// esc: the extension closes its panel itself.
	r, evs = p.call(`{"id":"3","type":"panel_key","panel_id":"todo-main","key":"esc"}`)
	wantResponse(t, r, "panel_key", true, "")
	if pc := p.event("panel_close", evs).(*wire.PanelCloseEvent); pc.PanelID != "todo-main" || pc.Extension != "todo" {
		t.Fatalf("panel_close: %+v", pc)
	}
	// The user closes it: the extension is told.
	runCompat(t, p, "4", "todo", "")
	r, _ = p.call(`{"id":"5","type":"close_panel","panel_id":"todo-main"}`)
	wantResponse(t, r, "close_panel", true, "")
	commandUntil(t, p, "todo-closed", "closed 1 times")

	// A tool opens the panel on its own; keys then reach it.
	r, _ = p.call(`{"id":"7","type":"prompt","message":"show my todos"}`)
	wantResponse(t, r, "prompt", true, "")
	evs = p.untilDone()
	if pr := p.event("panel_render", evs).(*wire.PanelRenderEvent); pr.PanelID != "todo-main" || pr.Extension != "todo" || pr.Lines[0] != "  □ buy milk" {
		t.Fatalf("panel opened by the tool: %+v", pr)
	}
	r, evs = p.call(`{"id":"8","type":"panel_key","panel_id":"todo-main","key":"up"}`)
	wantResponse(t, r, "panel_key", true, "")
	if pr := p.event("panel_render", evs).(*wire.PanelRenderEvent); pr.Lines[0] != "▸ □ buy milk" {
		t.Fatalf("after up: %+v", pr.Lines)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func compatWeather(t *testing.T, dir string) {
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"name": name, "args": args}
	}
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{
			call("weather", map[string]any{"city": "Berlin"}),
			call("weather", map[string]any{}),
			call("weather_map", map[string]any{"city": "Oslo"}),
			call("forecast", map[string]any{"city": "Rome"}),
			call("alerts", map[string]any{"city": "Paris"}),
			call("radar", map[string]any{"city": "Lima"}),
			call("pick_city", map[string]any{}),
			call("compare", map[string]any{}),
		}},
		map[string]any{"text": "It drizzles."},
	}}}})
	homeEnv, _ := zotHomeEnv(t)
	p := start(t, []string{homeEnv}, rpcArgs(t, "--script", s, "--ext", dir)...)
	r, _ := p.call(`{"id":"1","type":"prompt","message":"weather?"}`)
	wantResponse(t, r, "prompt", true, "")
	results := toolResults(p.untilDone())
	if len(results) != 8 {
		t.Fatalf("tool results: %d", len(results))
	}
	for i, want := range []struct {
		text    string
		isError bool
	}{
		{"Berlin: 16°C, drizzle", false},
		{`weather: want {"city": "..."}`, true},
		{"map of Oslo", false},
		{"# Rome\n\n- **Mon** rain\n- **Tue** sun", false},
		{"no alerts for Paris", false},
		{"radar over Lima: clear", false},
		{"the user picked Oslo", false},
		{"compare: ext: zot's host does not offer call_tool: an extension cannot call another tool", true},
	} {
		if got := resultText(results[i]); got != want.text || results[i].IsError != want.isError {
			t.Errorf("result %d: %q (error %v), want %q (error %v)", i, got, results[i].IsError, want.text, want.isError)
		}
	}
	images := 0
	for _, b := range results[2].Content {
		if img, ok := b.(*wire.ImageBlock); ok && img.MIMEType == "image/png" {
			images++
		}
	}
	if images != 3 || len(results[2].Content) != 4 {
		t.Errorf("weather_map: %d blocks, %d PNG images; want a text and 3 images", len(results[2].Content), images)
	}
	r, _ = p.call(`{"id":"2","type":"get_extensions"}`)
	if !strings.Contains(string(r.Data), `"tools":["weather","weather_map","forecast","alerts","radar","pick_city","compare"]`) {
		t.Errorf("get_extensions: %s", r.Data)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
