package engine

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/sdk/extwire"
	"zot.dev/zot/sdk/wire"
)

// syncBuffer is a log goroutines may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// names returns the names of cmds, space-separated.
func names(cmds []wire.SlashCommand) string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

// The built-in commands: listed first, each answering what a door shows.
func TestBuiltinCommands(t *testing.T) {
	s := newSession(t, `{"turns":[{"steps":[{"text":"one"}]}]}`, nil)
	ctx := context.Background()
	cmds := s.Commands()
	if got := names(cmds); got != "help compact clear model mode reload undo jail unjail skills agents" {
		t.Fatalf("commands %q", got)
	}
	for _, c := range cmds {
		if c.Source != wire.CommandSourceBuiltin || c.Extension != "" || c.Description == "" {
			t.Errorf("built-in %+v", c)
		}
	}

	run, err := s.RunCommand(ctx, "help", "")
	if err != nil || run.Result.Action != wire.CommandActionDisplay || !strings.Contains(run.Result.Text, "/mode [ask, accept_edits, auto or read_only]: Show the permission modes") {
		t.Fatalf("/help: %+v %v", run.Result, err)
	}
	if d, ok := run.Event.(*wire.ExtDisplayEvent); !ok || d.Text != run.Result.Text {
		t.Errorf("/help event %#v", run.Event)
	}
	if slashed, err := s.RunCommand(ctx, "/help", ""); err != nil || slashed.Result.Text != run.Result.Text {
		t.Errorf("/help named with its slash: %+v %v", slashed.Result, err)
	}
	if _, err := s.RunCommand(ctx, "nosuch", ""); !errors.Is(err, ErrNotFound) || wire.CodeOf(err) != wire.CodeNotFound || !strings.Contains(err.Error(), "unknown command /nosuch: /help lists") {
		t.Errorf("an unknown command: %v (code %s)", err, wire.CodeOf(err))
	}

	run, err = s.RunCommand(ctx, "mode", " read_only ")
	if err != nil || !run.Changed.Mode || s.Mode() != ModeReadOnly || run.Result.Text != "Mode: read_only." {
		t.Fatalf("/mode read_only: %+v %v (mode %s)", run, err, s.Mode())
	}
	run, _ = s.RunCommand(ctx, "mode", "sometimes")
	if run.Result.Action != wire.CommandActionNoop || !strings.Contains(run.Result.Error, "not a mode") || run.Changed.Mode {
		t.Errorf("/mode sometimes: %+v", run)
	}
	run, _ = s.RunCommand(ctx, "model", "")
	if !strings.Contains(run.Result.Text, "Model: scripted. Models of scripted:") {
		t.Errorf("/model: %q", run.Result.Text)
	}
	run, _ = s.RunCommand(ctx, "model", "no-such-model")
	if !strings.Contains(run.Result.Error, `"no-such-model" is not a scripted model`) || run.Changed.Model {
		t.Errorf("/model no-such-model: %+v", run)
	}
	run, err = s.RunCommand(ctx, "compact", "keep the names")
	if err != nil || run.Work == nil || run.Work.Compact == nil || run.Work.Compact.Instructions != "keep the names" || run.Result.Action != wire.CommandActionCompact {
		t.Fatalf("/compact: %+v %v", run, err)
	}
	run, err = s.RunCommand(ctx, "reload", "")
	if err != nil || !strings.Contains(run.Result.Text, "No extension was found") {
		t.Errorf("/reload without extensions: %+v %v", run.Result, err)
	}
	if _, err := s.RunCommand(ctx, "nope", ""); !errors.Is(err, ErrNotFound) || wire.CodeOf(err) != wire.CodeNotFound {
		t.Errorf("unknown command: %v", err)
	}

	// /clear: refused while work runs, then the transcript is gone.
	c := newCollector()
	gate := make(chan struct{})
	w := prompt("p1", "go", c.sink)
	w.Ready = func(context.Context) { <-gate }
	if err := s.Submit(w, Queue, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunCommand(ctx, "clear", ""); !errors.Is(err, ErrBusy) {
		t.Errorf("/clear while busy: %v", err)
	}
	close(gate)
	c.waitDone(t)
	if s.MessageCount() == 0 {
		t.Fatal("the prompt left no messages")
	}
	run, err = s.RunCommand(ctx, "clear", "")
	if err != nil || !run.Changed.Transcript || s.MessageCount() != 0 {
		t.Errorf("/clear: %+v %v, %d messages", run.Result, err, s.MessageCount())
	}
	s.Close()
	if _, err := s.RunCommand(ctx, "help", ""); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// An extension's command named like a built-in is left out (logged
// once); the built-in runs. An extension's panel is the session's
// state: opened by the command's answer, redrawn by its renders, gone
// once closed.
func TestExtensionCommandsAndPanels(t *testing.T) {
	dir := t.TempDir()
	folder := pyExtension(t, dir, "py", "shadow")
	log := &syncBuffer{}
	s := newSession(t, `{"turns":[{"steps":[{"text":"one"}]}]}`, func(c *SessionConfig) {
		c.Extensions = ExtensionConfig{Paths: []string{folder}}
		c.Log = log
	})
	notices := newNoticeLog()
	s.SetNoticeSink(NoticeSink{Send: notices.send})
	ctx := context.Background()
	s.WaitExtensions(ctx)
	cmds := s.Commands()
	if got := names(cmds); got != "help compact clear model mode reload undo jail unjail skills agents hello-py" {
		t.Fatalf("commands %q", got)
	}
	if c := cmds[len(cmds)-1]; c.Source != wire.CommandSourceExtension || c.Extension != "py" || c.Hint == "" {
		t.Errorf("the extension's command %+v", c)
	}
	s.Commands()
	if n := strings.Count(log.String(), "command /clear of extension py is left out"); n != 1 {
		t.Errorf("the shadowed command logged %d times:\n%s", n, log)
	}
	run, err := s.RunCommand(ctx, "clear", "")
	if err != nil || run.Result.Extension != "" || run.Result.Text != "The conversation was cleared." {
		t.Errorf("/clear ran %+v %v", run.Result, err)
	}
	if !s.HasCommand("hello-py") || !s.HasCommand("clear") || s.HasCommand("nope") {
		t.Error("HasCommand")
	}

	run, err = s.RunCommand(ctx, "hello-py", "go on")
	if err != nil || run.Work == nil || run.Work.Prompt == nil || run.Work.Prompt.Text != "hi from py: go on" {
		t.Fatalf("the extension's prompt: %+v %v", run, err)
	}
	run, err = s.RunCommand(ctx, "hello-py", "panel")
	if err != nil || run.Result.Action != wire.CommandActionOpenPanel {
		t.Fatalf("panel: %+v %v", run.Result, err)
	}
	if p := s.Panels(); len(p) != 1 || p[0].Extension != "py" || p[0].Panel.ID != "p1" || p[0].Panel.Lines[0] != "one" {
		t.Fatalf("open panels %+v", p)
	}
	if err := s.PanelKey("p1", extwire.KeyNameDown, ""); err != nil {
		t.Fatal(err)
	}
	notices.wait(t, "panel_render", func(ev wire.Event) bool { _, ok := ev.(*wire.PanelRenderEvent); return ok })
	if p := s.Panels(); len(p) != 1 || p[0].Panel.Lines[0] != "key down " {
		t.Fatalf("redrawn panels %+v", p)
	}
	if err := s.PanelKey("p1", extwire.KeyNameEsc, ""); err != nil {
		t.Fatal(err)
	}
	notices.wait(t, "panel_close", func(ev wire.Event) bool { _, ok := ev.(*wire.PanelCloseEvent); return ok })
	if p := s.Panels(); len(p) != 0 {
		t.Fatalf("panels after the extension closed it: %+v", p)
	}
}

// A panel's redraw or close that the door drops (its client reads too
// slowly: NoticeSink.Full) still changes the session's open panels, so a
// client told of them later is not shown a panel that closed, or lines
// it no longer draws.
func TestDroppedPanelNoticesStillChangePanels(t *testing.T) {
	s := newSession(t, "", nil)
	s.SetNoticeSink(NoticeSink{Send: func(Notice) { t.Error("a notice the door drops was sent") }, Full: func() bool { return true }})
	s.panels.opened("ext", wire.Panel{ID: "a", Lines: []string{"old"}})
	s.panels.opened("ext", wire.Panel{ID: "b", Lines: []string{"b"}})
	s.plug.notices.push(&wire.PanelRenderEvent{Extension: "ext", PanelID: "a", Lines: []string{"new"}}, true)
	s.plug.notices.push(&wire.PanelCloseEvent{Extension: "ext", PanelID: "b"}, true)
	got := s.Panels()
	if len(got) != 1 || got[0].Panel.ID != "a" || !slices.Equal(got[0].Panel.Lines, []string{"new"}) {
		t.Fatalf("open panels %+v; want only a, drawing new", got)
	}
}
