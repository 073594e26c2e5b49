// Package toast shows short notices in the terminal client: an extension's
// `notify`, an extension or MCP server that failed, project extensions left
// out of an untrusted folder (all `_zot/notify` over ACP), by level, each
// for a while.
//
// The app calls Add for each notice and returns the command Add gives (a
// timer); it hands Update every message, so the timer's message removes
// the toast when its time is up; it draws View between the conversation
// and the input. Esc (when nothing else wants it) may Clear them.
package toast

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/render"
)

// lifetime is how long a toast of a level stays: errors longest, then
// warnings, then the rest (a switch, not a map: a package-level map is built by an init
// that every start of zot runs (and maps in the code around it)).
func lifetime(level acp.NotifyLevel) time.Duration {
	switch level {
	case acp.NotifyLevelError:
		return 20 * time.Second
	case acp.NotifyLevelWarn:
		return 10 * time.Second
	}
	return 5 * time.Second
}

// maxLines is how many lines of one notice show (a failed start carries
// the last lines of a log).
const maxLines = 4

// Toast is one notice on screen.
type Toast struct {
	ID      int
	Level   acp.NotifyLevel
	Label   string // "[todo]", "[mcp github]", "[trust]", "[zot]"
	Message string
}

// expired is the timer's message: the toast id's time is up.
type expired struct{ id int }

// Model is the toasts on screen, oldest first. The zero Model is ready.
type Model struct {
	// Max is how many show at once (3 when zero): a new one pushes the
	// oldest out.
	Max int
	// ASCII marks levels with letters in place of ✓, ✖ and ℹ.
	ASCII bool
	// Styles by level; DefaultStyles when nil.
	Styles map[acp.NotifyLevel]lipgloss.Style
	// Lifetime overrides the per-level times when non-zero (tests).
	Lifetime time.Duration

	toasts []Toast
	next   int
}

// DefaultStyles colour each level: info blue, success green, warn yellow,
// error red.
func DefaultStyles() map[acp.NotifyLevel]lipgloss.Style {
	return map[acp.NotifyLevel]lipgloss.Style{
		acp.NotifyLevelInfo:    lipgloss.NewStyle().Foreground(lipgloss.Color("4")),
		acp.NotifyLevelSuccess: lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		acp.NotifyLevelWarn:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		acp.NotifyLevelError:   lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
	}
}

// Label is how a notice names who it is from.
func Label(n acp.ZotNotifyNotification) string {
	name := ""
	if n.Name != nil {
		name = *n.Name
	}
	switch {
	case n.Source == acp.NotifySourceExtension && name != "":
		return "[" + name + "]"
	case n.Source == acp.NotifySourceMCP && name != "":
		return "[mcp " + name + "]"
	case n.Source == "":
		return "[zot]"
	}
	return "[" + string(n.Source) + "]"
}

// Add shows n and returns the command that takes it down when its time is
// up.
func (m *Model) Add(n acp.ZotNotifyNotification) tea.Cmd {
	m.next++
	t := Toast{ID: m.next, Level: n.Level, Label: Label(n), Message: n.Message}
	m.toasts = append(m.toasts, t)
	if limit := m.max(); len(m.toasts) > limit {
		m.toasts = append(m.toasts[:0:0], m.toasts[len(m.toasts)-limit:]...)
	}
	life := m.Lifetime
	if life == 0 {
		life = lifetime(n.Level)
	}
	id := t.ID
	return tea.Tick(life, func(time.Time) tea.Msg { return expired{id} })
}

func (m *Model) max() int {
	if m.Max <= 0 {
		return 3
	}
	return m.Max
}

// Update removes a toast whose time is up; other messages are ignored.
func (m *Model) Update(msg tea.Msg) {
	if e, ok := msg.(expired); ok {
		for i, t := range m.toasts {
			if t.ID == e.id {
				m.toasts = append(m.toasts[:i], m.toasts[i+1:]...)
				break
			}
		}
	}
}

// Toasts are the toasts on screen, oldest first.
func (m *Model) Toasts() []Toast { return m.toasts }

// Clear takes every toast down.
func (m *Model) Clear() { m.toasts = nil }

// View draws the toasts in width cells: a mark and the label in the
// level's colour, then the message (its first lines, each cut to the
// width). It is empty when there are none.
func (m *Model) View(width int) string {
	if len(m.toasts) == 0 {
		return ""
	}
	styles := m.Styles
	if styles == nil {
		styles = DefaultStyles()
	}
	var b strings.Builder
	for i, t := range m.toasts {
		if i > 0 {
			b.WriteByte('\n')
		}
		head := m.mark(t.Level) + " " + clean(t.Label)
		lines := strings.Split(strings.TrimRight(t.Message, "\n"), "\n")
		if len(lines) > maxLines {
			lines = append(lines[:maxLines-1], fmt.Sprintf("… %d more lines", len(lines)-maxLines+1))
		}
		hw := ansi.StringWidth(head) + 1
		b.WriteString(styles[t.Level].Render(head))
		for j, l := range lines {
			if j > 0 {
				b.WriteByte('\n')
				b.WriteString(strings.Repeat(" ", hw-1))
			}
			b.WriteString(" " + ansi.Truncate(clean(l), max(width-hw, 1), "…"))
		}
	}
	return b.String()
}

func (m *Model) mark(l acp.NotifyLevel) string {
	marks := map[acp.NotifyLevel][2]string{
		acp.NotifyLevelInfo:    {"ℹ", "i"},
		acp.NotifyLevelSuccess: {"✓", "+"},
		acp.NotifyLevelWarn:    {"!", "!"},
		acp.NotifyLevelError:   {"✖", "x"},
	}
	mk, ok := marks[l]
	if !ok {
		mk = marks[acp.NotifyLevelInfo]
	}
	if m.ASCII {
		return mk[1]
	}
	return mk[0]
}

// clean shows s on one line, its control characters escaped (an
// escape an extension sends is shown, never obeyed) and a tab as a space.
func clean(s string) string { return render.CleanLine(strings.TrimSuffix(s, "\r")) }
