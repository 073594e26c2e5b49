package rpcclient

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// pyExtension writes the folder of package exthost's Python test
// extension in mode and returns it.
func pyExtension(t *testing.T, name, mode string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "internal", "exthost", "testdata", "py", "ext.py"))
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

func TestExtensionHelpers(t *testing.T) {
	var mu sync.Mutex
	var pushed []wire.Event
	c, err := Start(context.Background(), Options{
		Bin:  zotBin,
		Args: []string{"--provider", "scripted", "--cwd", t.TempDir(), "--ext", pyExtension(t, "py", "ok")},
		Env:  cleanEnv(),
		OnEvent: func(ev wire.Event) {
			mu.Lock()
			pushed = append(pushed, ev)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctx(t)

	res, s, err := c.RunCommandStream(ctx, "hello-py", "display note")
	if err != nil || s != nil || res.Action != wire.CommandActionDisplay || res.Text != "note" {
		t.Fatalf("display: %+v %v", res, err)
	}
	cmds, err := c.Commands(ctx)
	// zot's own commands first, then the extension's.
	if err != nil || len(cmds) < 2 || cmds[0].Source != wire.CommandSourceBuiltin || cmds[len(cmds)-1].Extension != "py" || cmds[len(cmds)-2].Source != wire.CommandSourceBuiltin {
		t.Fatalf("commands: %+v %v", cmds, err)
	}
	exts, err := c.Extensions(ctx)
	if err != nil || len(exts) != 1 || exts[0].State != "ready" {
		t.Fatalf("extensions: %+v %v", exts, err)
	}
	if res, _, err = c.RunCommandStream(ctx, "hello-py", "panel"); err != nil || res.Panel == nil {
		t.Fatalf("panel: %+v %v", res, err)
	}
	if err := c.PanelKey(ctx, "p1", wire.PanelKeyEsc, ""); err != nil {
		t.Fatal(err)
	}
	// The extension closes its panel on esc; that comes to OnEvent.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		var closed bool
		for _, ev := range pushed {
			if pc, ok := ev.(*wire.PanelCloseEvent); ok && pc.PanelID == "p1" {
				closed = true
			}
		}
		mu.Unlock()
		if closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no panel_close pushed: %v", types(pushed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantCode(t, c.ClosePanel(ctx, "p1"), wire.CodeNotFound, "close_panel")
	_, _, err = c.RunCommandStream(ctx, "nope", "")
	wantCode(t, err, wire.CodeNotFound, "run_command")

	res, s, err = c.RunCommandStream(ctx, "hello-py", "go on")
	if err != nil || s == nil || !s.Start.Started || res.Text != "hi from py: go on" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	evs := collect(t, s)
	if _, ok := find[*wire.UserMessageEvent](evs); !ok {
		t.Fatalf("prompt events: %v", types(evs))
	}
	if exts, err = c.ReloadExtensions(ctx); err != nil || len(exts) != 1 || exts[0].State != "ready" {
		t.Fatalf("reload: %+v %v", exts, err)
	}
	// zot's /compact is work: its events come on the channel, done last.
	cres, ch, err := c.RunCommand(ctx, "compact", "")
	if err != nil || ch == nil || cres.Action != wire.CommandActionCompact {
		t.Fatalf("/compact: %+v %v", cres, err)
	}
	var last wire.Event
	for ev := range ch {
		last = ev
	}
	if last == nil || last.Type() != wire.TypeDoneEvent {
		t.Fatalf("/compact's events ended with %v", last)
	}
}
