package toast

import (
	"strings"
	"testing"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/tuitest"
)

func ptr(s string) *string { return &s }

func note(level acp.NotifyLevel, src acp.NotifySource, name, msg string) acp.ZotNotifyNotification {
	n := acp.ZotNotifyNotification{Level: level, Source: src, Message: msg}
	if name != "" {
		n.Name = ptr(name)
	}
	return n
}

func TestExpiresAfterItsTime(t *testing.T) {
	m := Model{Lifetime: 10 * time.Millisecond}
	cmd := m.Add(note(acp.NotifyLevelInfo, acp.NotifySourceExtension, "todo", "saved"))
	m.Add(note(acp.NotifyLevelError, acp.NotifySourceMCP, "github", "crashed"))
	if len(m.Toasts()) != 2 {
		t.Fatalf("%d toasts, want 2", len(m.Toasts()))
	}
	msg := cmd() // the timer fires after the lifetime
	m.Update(msg)
	if got := m.Toasts(); len(got) != 1 || got[0].Label != "[mcp github]" {
		t.Fatalf("after the first's timer: %+v", got)
	}
	m.Update(msg) // a second time changes nothing
	if len(m.Toasts()) != 1 {
		t.Fatal("an old timer removed another toast")
	}
	m.Clear()
	if m.View(40) != "" {
		t.Fatal("Clear left toasts")
	}
}

func TestLifetimeByLevel(t *testing.T) {
	errs, warns, infos := lifetime(acp.NotifyLevelError), lifetime(acp.NotifyLevelWarn), lifetime(acp.NotifyLevelInfo)
	if !(errs > warns && warns > infos) || lifetime(acp.NotifyLevelSuccess) != infos || lifetime("bogus") != infos {
		t.Fatalf("errors should stay longest, then warnings, the rest alike: %v %v %v", errs, warns, infos)
	}
}

func TestAtMostMax(t *testing.T) {
	m := Model{Max: 2}
	for _, s := range []string{"one", "two", "three"} {
		m.Add(note(acp.NotifyLevelInfo, acp.NotifySourceZot, "", s))
	}
	if got := m.Toasts(); len(got) != 2 || got[0].Message != "two" {
		t.Fatalf("toasts %+v, want the last two", got)
	}
}

func TestScreens(t *testing.T) {
	all := func(m *Model) {
		m.Add(note(acp.NotifyLevelInfo, acp.NotifySourceExtension, "todo", "refreshed cache (12 entries)"))
		m.Add(note(acp.NotifyLevelSuccess, acp.NotifySourceExtension, "todo", "saved 3 items"))
		m.Add(note(acp.NotifyLevelWarn, acp.NotifySourceTrust, "", "project extensions left out: this folder is not trusted (zot trust)"))
		m.Add(note(acp.NotifyLevelError, acp.NotifySourceMCP, "github", "did not start:\nline 1\nline 2\nline 3\nline 4\nline 5"))
	}
	for _, c := range []struct {
		name  string
		ascii bool
		width int
	}{{"levels", false, 60}, {"levels-ascii", true, 60}, {"levels-narrow", false, 30}} {
		t.Run(c.name, func(t *testing.T) {
			m := Model{Max: 4, ASCII: c.ascii}
			all(&m)
			v := m.View(c.width)
			for _, l := range strings.Split(tuitest.Screen(v), "\n") {
				if len([]rune(l)) > c.width {
					t.Errorf("row over %d cells: %q", c.width, l)
				}
			}
			tuitest.Golden(t, c.name, tuitest.Screen(v)+"\n")
		})
	}
}
