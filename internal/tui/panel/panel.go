// Package panel shows an extension's panel in the terminal client: the
// lines an extension draws (seed 001's open_panel and panel_render, carried
// over ACP as `_zot/panel/opened` and `_zot/panel/rendered`), placed over
// the input while it has the keys.
//
// The app feeds it the three notifications (Open, Render, Closed), hands it
// every key and paste while it IsOpen (the input is blurred then), and
// acts on what Update answers: each Key goes out as a `_zot/panel/key`
// request, and Close as a `_zot/panel/close` request (the panel is gone at
// once; the `_zot/panel/closed` that follows finds nothing to close).
package panel

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/render"
)

// maxPasteKeys bounds the rune keys one paste sends to a panel.
const maxPasteKeys = 256

// Key is one key press for the panel's extension: the body of a
// `_zot/panel/key` request (with the session's id added by the app).
type Key struct {
	PanelID string
	Key     acp.PanelKey
	// Text is the character, for acp.PanelKeyRune.
	Text string
}

// Styles are how a panel draws its parts.
type Styles struct {
	Rule, Title, Line, Footer, More lipgloss.Style
}

// DefaultStyles are the panel's colours.
func DefaultStyles() *Styles {
	return &Styles{
		Rule:   lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		Title:  lipgloss.NewStyle().Bold(true),
		Line:   lipgloss.NewStyle(),
		Footer: lipgloss.NewStyle().Faint(true),
		More:   lipgloss.NewStyle().Faint(true),
	}
}

// Model is the open panel, if any. The zero Model has none open.
type Model struct {
	// MaxLines caps the body's rows (0: no cap); the app sets it from the
	// terminal's height so the input stays on screen.
	MaxLines int
	// ASCII draws the rules with "-" in place of "─".
	ASCII bool
	// Styles, DefaultStyles when nil.
	Styles *Styles

	open  bool
	frame acp.PanelFrame
	title string
}

// Open shows f (from `_zot/panel/opened`), in place of any panel open.
func (m *Model) Open(f acp.PanelFrame) {
	m.open = true
	m.frame = f
	m.title = ""
	if f.Title != nil {
		m.title = *f.Title
	}
}

// Render applies a fresh frame (from `_zot/panel/rendered`) when it is the
// open panel's, keeping the title when f has none; it reports whether it
// did.
func (m *Model) Render(f acp.PanelFrame) bool {
	if !m.open || f.PanelID != m.frame.PanelID || f.Extension != m.frame.Extension {
		return false
	}
	title := m.title
	m.frame = f
	if f.Title != nil && *f.Title != "" {
		title = *f.Title
	}
	m.title = title
	return true
}

// Closed closes the panel (from `_zot/panel/closed`) when id is the open
// one's; it reports whether it was.
func (m *Model) Closed(id string) bool {
	if !m.open || id != m.frame.PanelID {
		return false
	}
	m.open = false
	return true
}

// IsOpen says whether a panel shows and has the keys.
func (m *Model) IsOpen() bool { return m.open }

// ID is the open panel's id; Extension the extension that draws it.
func (m *Model) ID() string { return m.frame.PanelID }

// Extension is the extension that draws the open panel.
func (m *Model) Extension() string { return m.frame.Extension }

// Update maps a key press or a paste to the keys for the extension, seed
// 001's names: up, down, left, right, enter, tab, pageup, pagedown, home,
// end, backspace, delete, and rune with its character (space included; a
// paste is one rune key per character, at most 256). Esc and ctrl+c are
// never sent: they close the panel here, and close is true (send
// `_zot/panel/close`). Other keys (with ctrl or alt, function keys) are
// not sent.
func (m *Model) Update(msg tea.Msg) (keys []Key, close bool) {
	if !m.open {
		return nil, false
	}
	switch msg := msg.(type) {
	case tea.PasteMsg:
		for _, r := range msg.Content {
			if len(keys) == maxPasteKeys {
				break
			}
			if !unicode.IsControl(r) {
				keys = append(keys, Key{PanelID: m.frame.PanelID, Key: acp.PanelKeyRune, Text: string(r)})
			}
		}
		return keys, false
	case tea.KeyPressMsg:
		ks := msg.Keystroke()
		if ks == "esc" || ks == "ctrl+c" {
			m.open = false
			return nil, true
		}
		if name, ok := named(ks); ok {
			return []Key{{PanelID: m.frame.PanelID, Key: name}}, false
		}
		if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
			for _, r := range msg.Text {
				keys = append(keys, Key{PanelID: m.frame.PanelID, Key: acp.PanelKeyRune, Text: string(r)})
			}
		}
	}
	return keys, false
}

// named returns the panel's name of a Bubble Tea key name, and whether it
// has one (a switch, not a map: a package-level map is built by an init
// that every start of zot runs (and maps in the code around it)).
func named(ks string) (acp.PanelKey, bool) {
	switch ks {
	case "up":
		return acp.PanelKeyUp, true
	case "down":
		return acp.PanelKeyDown, true
	case "left":
		return acp.PanelKeyLeft, true
	case "right":
		return acp.PanelKeyRight, true
	case "enter":
		return acp.PanelKeyEnter, true
	case "tab":
		return acp.PanelKeyTab, true
	case "pgup":
		return acp.PanelKeyPageup, true
	case "pgdown":
		return acp.PanelKeyPagedown, true
	case "home":
		return acp.PanelKeyHome, true
	case "end":
		return acp.PanelKeyEnd, true
	case "backspace":
		return acp.PanelKeyBackspace, true
	case "delete":
		return acp.PanelKeyDelete, true
	}
	return "", false
}

// View draws the open panel in width cells: a rule with the title (or the
// extension's name), the lines as the extension wrote them (escape
// sequences and control characters removed, each cut to the width), the
// footer, dimmed, and a closing rule. It is empty while none is open.
func (m *Model) View(width int) string {
	if !m.open {
		return ""
	}
	st := m.Styles
	if st == nil {
		st = DefaultStyles()
	}
	rule := "─"
	if m.ASCII {
		rule = "-"
	}
	title := clean(m.title)
	if title == "" {
		title = clean(m.frame.Extension)
	}
	var b strings.Builder
	head := rule + rule + " "
	t := ansi.Truncate(title, max(width-6, 1), "…")
	b.WriteString(st.Rule.Render(head))
	b.WriteString(st.Title.Render(t))
	b.WriteString(st.Rule.Render(" " + strings.Repeat(rule, max(width-ansi.StringWidth(head+t)-1, 0))))
	b.WriteByte('\n')
	lines := m.frame.Lines
	more := 0
	if m.MaxLines > 0 && len(lines) > m.MaxLines {
		more = len(lines) - (m.MaxLines - 1)
		lines = lines[:m.MaxLines-1]
	}
	for _, l := range lines {
		b.WriteString(st.Line.Render(ansi.Truncate(clean(l), width, "…")))
		b.WriteByte('\n')
	}
	if more > 0 {
		b.WriteString(st.More.Render(fmt.Sprintf("… %d more lines", more)))
		b.WriteByte('\n')
	}
	if m.frame.Footer != nil && *m.frame.Footer != "" {
		b.WriteString(st.Footer.Render(ansi.Truncate(clean(*m.frame.Footer), width, "…")))
		b.WriteByte('\n')
	}
	b.WriteString(st.Rule.Render(strings.Repeat(rule, width)))
	return b.String()
}

// clean shows s on one line, its control characters escaped (an
// escape an extension sends is shown, never obeyed) and a tab as a space.
func clean(s string) string { return render.CleanLine(strings.TrimSuffix(s, "\r")) }
