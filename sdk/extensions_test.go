package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/sdk"
	"zot.dev/zot/sdk/wire"
)

// pyExtension writes the folder of package exthost's Python test
// extension in mode and returns it.
func pyExtension(t *testing.T, name, mode string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "internal", "exthost", "testdata", "py", "ext.py"))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(t.TempDir(), name)
	os.MkdirAll(folder, 0o755)
	m, _ := json.Marshal(map[string]any{"name": name, "exec": "python3", "args": []string{script, mode, name}})
	if err := os.WriteFile(filepath.Join(folder, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	return folder
}

// pushed records the events extensions push.
type pushed struct {
	mu  sync.Mutex
	evs []sdk.Event
}

func (p *pushed) add(ev sdk.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evs = append(p.evs, ev)
}

func (p *pushed) wait(t *testing.T, match func(sdk.Event) bool) sdk.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		for _, ev := range p.evs {
			if match(ev) {
				p.mu.Unlock()
				return ev
			}
		}
		p.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no such event pushed")
	return nil
}

func TestExtensions(t *testing.T) {
	got := new(pushed)
	rt, err := sdk.New(sdk.Config{
		Provider:   "scripted",
		CWD:        t.TempDir(),
		Extensions: sdk.ExtensionConfig{Paths: []string{pyExtension(t, "py", "ok")}, OnEvent: got.add},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()

	res, ch, err := rt.RunCommand(ctx, "hello-py", "display hello")
	if err != nil || ch != nil || res.Action != wire.CommandActionDisplay || res.Text != "hello" || res.Extension != "py" {
		t.Fatalf("display: %+v %v %v", res, ch, err)
	}
	// zot's own commands first, then the extension's.
	if cmds, _ := rt.Commands(context.Background()); len(cmds) < 2 || cmds[0].Name != "help" || cmds[len(cmds)-1].Name != "hello-py" || cmds[len(cmds)-1].Source != wire.CommandSourceExtension || slices.ContainsFunc(cmds[:len(cmds)-1], func(c wire.SlashCommand) bool { return c.Source != wire.CommandSourceBuiltin }) {
		t.Fatalf("commands: %+v", cmds)
	}
	if exts, _ := rt.Extensions(context.Background()); len(exts) != 1 || exts[0].State != "ready" || exts[0].Tools[0] != "py_echo" {
		t.Fatalf("extensions: %+v", exts)
	}

	res, _, err = rt.RunCommand(ctx, "hello-py", "panel")
	if err != nil || res.Panel == nil || res.Panel.ID != "p1" {
		t.Fatalf("panel: %+v %v", res, err)
	}
	if err := rt.PanelKey(context.Background(), "p1", "enter", ""); err != nil {
		t.Fatal(err)
	}
	r := got.wait(t, func(ev sdk.Event) bool { _, ok := ev.(*wire.PanelRenderEvent); return ok }).(*wire.PanelRenderEvent)
	if r.Extension != "py" || r.Lines[0] != "key enter " {
		t.Fatalf("render: %+v", r)
	}
	if err := rt.PanelKey(context.Background(), "p1", "f13", ""); err == nil || wire.CodeOf(err) != wire.CodeInvalidParams {
		t.Fatalf("an unknown key: %v (code %q), want invalid_params", err, wire.CodeOf(err))
	}
	if err := rt.ClosePanel(context.Background(), "p1"); err != nil {
		t.Fatal(err)
	}
	if err := rt.ClosePanel(context.Background(), "p1"); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("closing it again: %v", err)
	}
	if _, _, err := rt.RunCommand(ctx, "nope", ""); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("unknown command: %v", err)
	}

	// A prompt action runs a prompt whose events come on the channel; the
	// extension sees them as lifecycle events.
	res, ch, err = rt.RunCommand(ctx, "hello-py", "tell me")
	if err != nil || ch == nil || res.Action != wire.CommandActionPrompt || res.Text != "hi from py: tell me" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var last sdk.Event
	for ev := range ch {
		last = ev
	}
	if _, ok := last.(*wire.DoneEvent); !ok {
		t.Fatalf("the prompt ended with %T", last)
	}
	got.wait(t, func(ev sdk.Event) bool {
		n, ok := ev.(*wire.ExtNotifyEvent)
		return ok && strings.HasPrefix(n.Message, "event turn_end")
	})

	list, err := rt.ReloadExtensions(ctx)
	if err != nil || len(list) != 1 || list[0].State != "ready" {
		t.Fatalf("reload: %+v %v", list, err)
	}
}

// Without extensions configured, the extension calls say so and nothing
// runs.
func TestNoExtensions(t *testing.T) {
	rt, err := sdk.New(sdk.Config{Provider: "scripted", CWD: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	cmds, err := rt.Commands(context.Background())
	if err != nil || len(cmds) == 0 || slices.ContainsFunc(cmds, func(c wire.SlashCommand) bool { return c.Source != wire.CommandSourceBuiltin }) {
		t.Fatalf("commands without any extension configured: %v %v", cmds, err)
	}
	exts, err := rt.Extensions(context.Background())
	if err != nil || len(exts) != 0 {
		t.Fatalf("extensions without any configured: %v %v", exts, err)
	}
	if _, _, err := rt.RunCommand(context.Background(), "x", ""); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("run: %v", err)
	}
}

// The first prompt of a Runtime reaches a fail-closed guard that blocks
// every model call; in an untrusted project the project's guard does not
// start, and TrustProject runs it.
func TestExtensionsFirstPromptGuardedAndTrust(t *testing.T) {
	guard, err := filepath.Abs(filepath.Join("..", "cmd", "zot", "testdata", "upstream", "guard"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(cfg sdk.ExtensionConfig, cwd string) (blocked, answered bool) {
		t.Helper()
		rt, err := sdk.New(sdk.Config{Provider: "scripted", CWD: cwd, Extensions: cfg})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		ch, err := rt.Prompt(context.Background(), "hi", nil)
		if err != nil {
			t.Fatal(err)
		}
		for ev := range ch {
			switch e := ev.(type) {
			case *wire.ErrorEvent:
				blocked = blocked || e.Code == wire.CodeBlocked && strings.Contains(e.Message, "guard: no model calls here (step 1)")
			case *wire.AssistantStartEvent:
				answered = true
			}
		}
		return blocked, answered
	}
	if blocked, answered := prompt(sdk.ExtensionConfig{Paths: []string{guard}}, t.TempDir()); !blocked || answered {
		t.Errorf("--ext guard: blocked %v, the model answered %v", blocked, answered)
	}

	project := t.TempDir()
	dst := filepath.Join(project, ".zot", "extensions", "guard")
	os.MkdirAll(dst, 0o755)
	for _, f := range []string{"extension.json", "guard.py"} {
		data, err := os.ReadFile(filepath.Join(guard, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, f), data, 0o644)
	}
	home := t.TempDir()
	if blocked, answered := prompt(sdk.ExtensionConfig{Discover: true, Home: home}, project); blocked || !answered {
		t.Errorf("untrusted project: blocked %v, the model answered %v", blocked, answered)
	}
	if blocked, answered := prompt(sdk.ExtensionConfig{Discover: true, Home: home, TrustProject: true}, project); !blocked || answered {
		t.Errorf("TrustProject: blocked %v, the model answered %v", blocked, answered)
	}
}
