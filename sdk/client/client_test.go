package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/client"
	"zot.dev/zot/sdk/rpcclient"
	"zot.dev/zot/sdk/wire"
)

// zotBin is the binary rpcclient runs: $ZOT_BIN, or one built for the
// tests.
var zotBin string

func TestMain(m *testing.M) {
	// No zot the tests start may touch the user's home.
	home, err := os.MkdirTemp("", "zot-client-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("ZOT_HOME", home)
	os.Unsetenv("ZOTCORE_RPC_TOKEN")
	code := zotbin.Main(m, &zotBin, false)
	os.RemoveAll(home)
	if mcpDir != "" {
		os.RemoveAll(mcpDir)
	}
	os.Exit(code)
}

// hangGuard bounds every wait; it only catches hangs, it times nothing.
const hangGuard = 60 * time.Second

// script answers the first three prompts at once and every later one
// slowly (2 s of text in 2-byte pieces), so a cancel lands mid-stream.
var script = map[string]any{"turns": []any{
	map[string]any{"steps": []any{map[string]any{"text": "A small picture."}}},
	map[string]any{"steps": []any{map[string]any{"text": "Two."}}},
	map[string]any{"steps": []any{map[string]any{"text": "Three."}}},
	map[string]any{"steps": []any{map[string]any{"text": strings.Repeat("slow ", 40), "chunk": 2, "delay_ms": 20}}},
}}

// setup is what both implementations are given: a working directory, the
// script, the Python test extension of package exthost, and an mcpServers
// file naming package mcphost's test MCP server as "t".
type setup struct {
	cwd, script, ext, mcp, skills string
	pushed                        *recorder
}

// mcpDir holds the test MCP server once it is built.
var mcpDir string

// mcpServer is the test MCP server, built once.
var mcpServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zot-client-mcp-")
	if err != nil {
		return "", err
	}
	mcpDir = dir
	bin := filepath.Join(dir, "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, "../../internal/mcphost/testdata/mcpserver").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the test MCP server: %v\n%s", err, out)
	}
	return bin, nil
})

func newSetup(t *testing.T) setup {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	s := setup{cwd: filepath.Join(dir, "work"), script: filepath.Join(dir, "script.json"), ext: filepath.Join(dir, "py"), mcp: filepath.Join(dir, "mcp.json"), skills: filepath.Join(dir, "skills"), pushed: &recorder{}}
	if err := os.WriteFile(s.script, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.skills, "notes", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"notes/SKILL.md":      "---\nname: notes\ndescription: Keep notes in NOTES.md.\n---\nAppend to NOTES.md; see refs/style.md.\n",
		"notes/refs/style.md": "One line per note.\n",
	} {
		if err := os.WriteFile(filepath.Join(s.skills, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := mcpServer()
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{"command": bin}}})
	if err := os.WriteFile(s.mcp, servers, 0o644); err != nil {
		t.Fatal(err)
	}
	extScript, err := filepath.Abs(filepath.Join("..", "..", "internal", "exthost", "testdata", "py", "ext.py"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := json.Marshal(map[string]any{"name": "py", "exec": "python3", "args": []string{extScript, "ok", "py"}})
	for _, d := range []string{s.cwd, s.ext} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.ext, "extension.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// recorder keeps the events pushed outside any work (panels, notices).
type recorder struct {
	mu  sync.Mutex
	evs []wire.Event
}

func (r *recorder) add(ev wire.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

// wait returns the first pushed event match accepts, failing the test
// after the hang guard.
func (r *recorder) wait(t *testing.T, what string, match func(wire.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		found := slices.ContainsFunc(r.evs, match)
		r.mu.Unlock()
		if found {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s was pushed", what)
}

// The same scenario runs against both implementations of client.Client:
// the in-process Runtime and a `zot rpc` subprocess.
func TestOneShape(t *testing.T) {
	t.Run("sdk.Runtime", func(t *testing.T) {
		s := newSetup(t)
		rt, err := sdk.New(sdk.Config{
			Provider:   "scripted",
			Script:     s.script,
			CWD:        s.cwd,
			Extensions: sdk.ExtensionConfig{Paths: []string{s.ext}, OnEvent: s.pushed.add},
			MCP:        sdk.MCPOptions{Files: []string{s.mcp}},
			Skills:     sdk.SkillsOptions{Dirs: []string{s.skills}},
		})
		if err != nil {
			t.Fatal(err)
		}
		scenario(t, rt, s)
	})
	t.Run("rpcclient.Client", func(t *testing.T) {
		s := newSetup(t)
		c, err := rpcclient.Start(context.Background(), rpcclient.Options{
			Bin:     zotBin,
			Args:    []string{"--provider", "scripted", "--script", s.script, "--cwd", s.cwd, "--ext", s.ext, "--mcp-config", s.mcp, "--skills-dir", s.skills},
			OnEvent: s.pushed.add,
			OnBadLine: func(line []byte, err error) {
				t.Errorf("stdout line is not a JSON object (%v): %q", err, line)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		scenario(t, c, s)
	})
}

// scenario drives c through everything both implementations do alike; it
// closes c.
func scenario(t *testing.T, c client.Client, s setup) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	defer c.Close()

	st, err := c.State(ctx)
	if err != nil || st.Provider != "scripted" || st.Model != "scripted" || st.Busy || st.MessageCount != 0 {
		t.Fatalf("state at start: %+v, %v", st, err)
	}
	models, err := c.ListModels(ctx)
	if err != nil || !slices.ContainsFunc(models, func(m wire.ModelInfo) bool { return m.ID == "scripted" }) {
		t.Errorf("models: %+v, %v", models, err)
	}

	// A prompt with an image: the transcript reports the image by size.
	pic := tinyPNG(t)
	evs := drain(t, must(c.Prompt(ctx, "look", []client.Image{{MIMEType: "image/png", Data: pic}})))
	if got := text(evs); got != "A small picture." {
		t.Errorf("answer %q", got)
	}
	msgs, err := c.Messages(ctx)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("messages after one prompt: %d, %v", len(msgs), err)
	}
	img, ok := msgs[0].Content[len(msgs[0].Content)-1].(*wire.ImageBlock)
	if !ok || img.MIMEType != "image/png" || img.Bytes != int64(len(pic)) {
		t.Errorf("the prompt's image: %#v", msgs[0].Content)
	}
	cost, err := c.Cost(ctx)
	if err != nil || cost.Input == 0 || cost.Output == 0 {
		t.Errorf("cost after one prompt: %+v, %v", cost, err)
	}
	// The prompt waited for the MCP server to start.
	servers, err := c.MCPServers(ctx)
	if err != nil || len(servers) != 1 || servers[0].Name != "t" || servers[0].Status != "ready" || !slices.Contains(servers[0].Tools, "mcp__t__echo") {
		t.Errorf("MCP servers: %+v, %v", servers, err)
	}

	// More MCP servers, in either shape: the wire's and the SDK's (a Go
	// map, a time.Duration); a server that cannot be used adds nothing.
	bin, err := mcpServer()
	if err != nil {
		t.Fatal(err)
	}
	timeout := int64(5000)
	if err := c.AddMCPServers(ctx, wire.MCPServer{Name: "w", Command: bin, Timeout: &timeout}, sdk.MCPServer{Name: "g", Command: bin, Env: map[string]string{"X": "1"}, Timeout: 5 * time.Second}); err != nil {
		t.Fatalf("adding MCP servers: %v", err)
	}
	if err := c.AddMCPServers(ctx, sdk.MCPServer{Name: "bad"}); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Errorf("adding a server with neither a command nor a URL: %v", err)
	}
	servers, err = c.MCPServers(ctx)
	if err != nil || len(servers) != 3 || servers[0].Name != "g" || servers[1].Name != "t" || servers[2].Name != "w" {
		t.Errorf("MCP servers after adding: %+v, %v", servers, err)
	}
	if err := c.RemoveMCPServer(ctx, "g"); err != nil {
		t.Error(err)
	}
	if err := c.RemoveMCPServer(ctx, "w"); err != nil {
		t.Error(err)
	}

	// Compaction, once it has more than its kept tail to summarise.
	drain(t, must(c.Prompt(ctx, "two", nil)))
	drain(t, must(c.Prompt(ctx, "three", nil)))
	evs = drain(t, must(c.Compact(ctx, "keep the numbers")))
	if cd, ok := find[*wire.CompactDoneEvent](evs); !ok || cd.Summary == "" || cd.MessagesBefore == nil || *cd.MessagesBefore != 6 {
		t.Fatalf("compaction: %v", types(evs))
	}
	if st, err = c.State(ctx); err != nil || st.MessageCount >= 6 {
		t.Errorf("compaction left %d messages (%v)", st.MessageCount, err)
	}

	// Extensions: a command that displays, one that opens a panel (keys
	// and the close come back outside any work), one that prompts.
	res, ch, err := c.RunCommand(ctx, "hello-py", "display note")
	if err != nil || ch != nil || res.Action != wire.CommandActionDisplay || res.Text != "note" {
		t.Fatalf("display command: %+v %v %v", res, ch, err)
	}
	cmds, err := c.Commands(ctx)
	// zot's own commands first, then the extension's.
	if err != nil || len(cmds) < 2 || cmds[0].Name != "help" || cmds[len(cmds)-1].Name != "hello-py" || cmds[len(cmds)-1].Extension != "py" {
		t.Errorf("commands: %+v, %v", cmds, err)
	}
	for _, c := range cmds[:max(len(cmds)-1, 0)] {
		if c.Source != "builtin" {
			t.Errorf("zot's own commands are not all before the extension's: %+v", cmds)
			break
		}
	}
	exts, err := c.Extensions(ctx)
	if err != nil || len(exts) != 1 || exts[0].Name != "py" || exts[0].State != "ready" {
		t.Errorf("extensions: %+v, %v", exts, err)
	}
	if res, _, err = c.RunCommand(ctx, "hello-py", "panel"); err != nil || res.Panel == nil {
		t.Fatalf("panel command: %+v, %v", res, err)
	}
	if err := c.PanelKey(ctx, "p1", wire.PanelKeyEsc, ""); err != nil {
		t.Fatal(err)
	}
	s.pushed.wait(t, "panel_close", func(ev wire.Event) bool {
		pc, ok := ev.(*wire.PanelCloseEvent)
		return ok && pc.PanelID == "p1"
	})
	if err := c.ClosePanel(ctx, "no-such-panel"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("closing a panel nobody opened: %v", err)
	}
	if _, _, err := c.RunCommand(ctx, "no-such-command", ""); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("an unknown command: %v", err)
	}
	res, ch, err = c.RunCommand(ctx, "hello-py", "go")
	if err != nil || res.Action != wire.CommandActionPrompt || ch == nil {
		t.Fatalf("prompt command: %+v, %v", res, err)
	}
	if user, ok := find[*wire.UserMessageEvent](drain(t, ch)); !ok || textOf(user.Content) != "hi from py: go" {
		t.Errorf("the command's prompt: %+v", user)
	}
	// zot's own: /mode answers with a text.
	if res, ch, err = c.RunCommand(ctx, "mode", ""); err != nil || ch != nil || !strings.Contains(res.Text, "Mode: ") {
		t.Errorf("/mode: %+v, %v", res, err)
	}
	exts, err = c.ReloadExtensions(ctx)
	if err != nil || len(exts) != 1 || exts[0].State != "ready" {
		t.Errorf("reload: %+v, %v", exts, err)
	}

	// Busy: while a prompt runs, clear and set_model are refused; Cancel
	// ends it, and Wait returns once it has.
	ch = must(c.Prompt(ctx, "slow", nil))
	first := <-ch
	for first.Type() != wire.TypeTextDeltaEvent {
		first = <-ch
	}
	if busy, err := c.Busy(ctx); err != nil || !busy {
		t.Errorf("busy while streaming: %v, %v", busy, err)
	}
	if err := c.Clear(ctx); !errors.Is(err, client.ErrBusy) {
		t.Errorf("clear while busy: %v", err)
	}
	if err := c.SetModel(ctx, "scripted"); !errors.Is(err, client.ErrBusy) {
		t.Errorf("set model while busy: %v", err)
	}
	if ran, err := c.Cancel(ctx); err != nil || !ran {
		t.Errorf("cancel: %v, %v", ran, err)
	}
	wantAborted(t, "cancelled", drain(t, ch))
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if busy, err := c.Busy(ctx); err != nil || busy {
		t.Errorf("busy after the cancel: %v, %v", busy, err)
	}
	if ran, err := c.Cancel(ctx); err != nil || ran {
		t.Errorf("cancel while idle: %v, %v", ran, err)
	}

	// The prompt's context ending cancels it too.
	pctx, pcancel := context.WithCancel(ctx)
	ch = must(c.Prompt(pctx, "slow too", nil))
	for ev := range ch {
		if ev.Type() == wire.TypeTextDeltaEvent {
			pcancel()
			break
		}
	}
	wantAborted(t, "cancelled by its context", drain(t, ch))
	pcancel()

	if err := c.SetMode(ctx, wire.PermissionModeReadOnly); err != nil {
		t.Error(err)
	}
	if st, err = c.State(ctx); err != nil || st.Mode != wire.PermissionModeReadOnly {
		t.Errorf("state after set_mode: %+v, %v", st, err)
	}
	if err := c.SetMode(ctx, "sometimes"); err == nil {
		t.Error("a mode nobody offers was taken")
	}
	if err := c.SetMode(ctx, wire.PermissionModeAuto); err != nil {
		t.Error(err)
	}
	// The sandbox: what is not given stays; a mode that is not one is
	// refused with invalid_params, changing nothing.
	off, on := false, true
	if sb, err := c.SetSandbox(ctx, wire.SandboxModeReadOnly, &off); err != nil || sb.Mode != wire.SandboxModeReadOnly || sb.Network {
		t.Errorf("set_sandbox read-only, network off: %+v, %v", sb, err)
	}
	if sb, err := c.SetSandbox(ctx, "", &on); err != nil || sb.Mode != wire.SandboxModeReadOnly || !sb.Network {
		t.Errorf("set_sandbox network on: %+v, %v", sb, err)
	}
	if _, err := c.SetSandbox(ctx, "sometimes", nil); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Errorf("set_sandbox sometimes: %v (code %q)", err, wire.CodeOf(err))
	}
	// by-mode is how a session may start (cmd/zot's default), not a mode
	// the wire names: refused in process as over zot rpc.
	if _, err := c.SetSandbox(ctx, "by-mode", nil); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Errorf("set_sandbox by-mode: %v (code %q)", err, wire.CodeOf(err))
	}
	if st, err = c.State(ctx); err != nil || st.Sandbox == nil || st.Sandbox.Mode != wire.SandboxModeReadOnly || !st.Sandbox.Network {
		t.Errorf("state after set_sandbox: %+v, %v", st.Sandbox, err)
	}
	if _, err := c.SetSandbox(ctx, wire.SandboxModeFull, nil); err != nil {
		t.Error(err)
	}
	if err := c.SetModel(ctx, ""); err == nil {
		t.Error("an empty model id was taken")
	}
	if err := c.SetModel(ctx, "scripted"); err != nil {
		t.Error(err)
	}
	// The skills named (a --skills-dir, Config.Skills) and nothing else.
	sk, err := c.Skills(ctx)
	if err != nil || len(sk.Skills) != 1 || sk.Skills[0].Name != "notes" || sk.Skills[0].Source != wire.SkillSourceFlag || !sk.Tool || len(sk.Shadowed)+len(sk.Problems) != 0 {
		t.Errorf("skills: %+v, %v", sk, err)
	}
	// No agent profile anywhere it looks: none listed, lists not null.
	if ag, err := c.Agents(ctx); err != nil || len(ag.Agents) != 0 || ag.Shadowed == nil || ag.Problems == nil {
		t.Errorf("agents: %+v, %v", ag, err)
	}
	if got, err := c.Skill(ctx, "notes", ""); err != nil || got.Text != "Append to NOTES.md; see refs/style.md." || !slices.Equal(got.Files, []string{"refs/style.md"}) {
		t.Errorf("skill notes: %+v, %v", got, err)
	}
	if got, err := c.Skill(ctx, "notes", "refs/style.md"); err != nil || got.Text != "One line per note.\n" {
		t.Errorf("skill notes refs/style.md: %+v, %v", got, err)
	}
	if _, err := c.Skill(ctx, "notes", "../notes/../../script.json"); wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Errorf("a path out of the skill: %v (code %q)", err, wire.CodeOf(err))
	}
	if _, err := c.Skill(ctx, "nope", ""); wire.CodeOf(err) != wire.CodeNotFound {
		t.Errorf("an unknown skill: %v (code %q)", err, wire.CodeOf(err))
	}
	// Undo of the last turn cuts the transcript back to before it.
	before, err := c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	undone, err := c.Undo(ctx, 0)
	if st, serr := c.State(ctx); err != nil || serr != nil || undone.Turn < 1 || undone.MessageCount >= before.MessageCount || st.MessageCount != undone.MessageCount {
		t.Errorf("undo: %+v, %v; %d messages before, %d after", undone, err, before.MessageCount, st.MessageCount)
	}
	if err := c.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Undo(ctx, 0); wire.CodeOf(err) != wire.CodeNotFound {
		t.Errorf("undo with nothing to undo: %v, want not_found", err)
	}
	if st, err = c.State(ctx); err != nil || st.MessageCount != 0 || st.Usage.Input != 0 {
		t.Errorf("state after clear: %+v, %v", st, err)
	}

	if err := c.RemoveMCPServer(ctx, "t"); err != nil {
		t.Error(err)
	}
	if err := c.RemoveMCPServer(ctx, "t"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("removing an MCP server twice: %v", err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := c.State(ctx); !errors.Is(err, client.ErrClosed) {
		t.Errorf("state after close: %v", err)
	}
	if _, err := c.Prompt(ctx, "late", nil); !errors.Is(err, client.ErrClosed) {
		t.Errorf("prompt after close: %v", err)
	}
	if err := c.Wait(ctx); !errors.Is(err, client.ErrClosed) {
		t.Errorf("wait after close: %v", err)
	}
}

// must returns v, failing the test's goroutine on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// drain reads ch to its end and checks it ends with exactly one done.
func drain(t *testing.T, ch <-chan wire.Event) []wire.Event {
	t.Helper()
	var evs []wire.Event
	timeout := time.After(hangGuard)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				if n := len(evs); n == 0 || evs[n-1].Type() != wire.TypeDoneEvent {
					t.Fatalf("events do not end with done: %v", types(evs))
				}
				return evs
			}
			if len(evs) > 0 && evs[len(evs)-1].Type() == wire.TypeDoneEvent {
				t.Fatalf("an event after done: %v", ev.Type())
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("no done after %v", types(evs))
		}
	}
}

// wantAborted checks that evs end with turn_end (stop "aborted") and done.
func wantAborted(t *testing.T, what string, evs []wire.Event) {
	t.Helper()
	n := len(evs)
	if te, ok := evs[max(n-2, 0)].(*wire.TurnEndEvent); !ok || te.Stop != wire.StopAborted {
		t.Errorf("%s prompt ended %v", what, types(evs[max(n-3, 0):]))
	}
}

func types(evs []wire.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type())
	}
	return out
}

// text joins the text deltas of evs.
func text(evs []wire.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if d, ok := ev.(*wire.TextDeltaEvent); ok {
			b.WriteString(d.Delta)
		}
	}
	return b.String()
}

// textOf joins the text blocks of content.
func textOf(content wire.ContentBlocks) string {
	var b strings.Builder
	for _, c := range content {
		if tb, ok := c.(*wire.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}

func find[T wire.Event](evs []wire.Event) (T, bool) {
	for _, ev := range evs {
		if v, ok := ev.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// tinyPNG is a 2×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, 2, 2))
	m.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
