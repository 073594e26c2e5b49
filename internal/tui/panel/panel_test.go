package panel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/tui/tuitest"
)

func ptr(s string) *string { return &s }

func todo(lines ...string) acp.PanelFrame {
	return acp.PanelFrame{PanelID: "todo-main", Extension: "todo", Title: ptr("Todos (2)"), Lines: lines,
		Footer: ptr("↑/↓ move · x done · d delete · esc close")}
}

// TestKeysMapToSeedNames presses every key the seed names and checks the
// name each goes out under.
func TestKeysMapToSeedNames(t *testing.T) {
	var m Model
	m.Open(todo("□ ship panel api"))
	cases := []struct {
		press string
		want  acp.PanelKey
		text  string
	}{
		{"up", acp.PanelKeyUp, ""}, {"down", acp.PanelKeyDown, ""}, {"left", acp.PanelKeyLeft, ""},
		{"right", acp.PanelKeyRight, ""}, {"enter", acp.PanelKeyEnter, ""}, {"tab", acp.PanelKeyTab, ""},
		{"pgup", acp.PanelKeyPageup, ""}, {"pgdown", acp.PanelKeyPagedown, ""}, {"home", acp.PanelKeyHome, ""},
		{"end", acp.PanelKeyEnd, ""}, {"backspace", acp.PanelKeyBackspace, ""}, {"delete", acp.PanelKeyDelete, ""},
		{"x", acp.PanelKeyRune, "x"}, {"X", acp.PanelKeyRune, "X"}, {"space", acp.PanelKeyRune, " "},
	}
	seen := map[acp.PanelKey]bool{}
	for _, c := range cases {
		keys, closing := m.Update(tuitest.Key(c.press))
		if closing || len(keys) != 1 || keys[0].Key != c.want || keys[0].Text != c.text || keys[0].PanelID != "todo-main" {
			t.Errorf("%s → %+v (close %v), want %s %q", c.press, keys, closing, c.want, c.text)
		}
		seen[c.want] = true
	}
	// With esc (which closes), that is every one of the 14.
	if len(seen) != 13 {
		t.Fatalf("covered %d keys, want 13 besides esc", len(seen))
	}
	for _, k := range []string{"ctrl+a", "alt+x", "shift+tab"} {
		if keys, closing := m.Update(tuitest.Key(k)); keys != nil || closing {
			t.Errorf("%s was sent: %+v %v", k, keys, closing)
		}
	}
	keys, _ := m.Update(tea.PasteMsg{Content: "ab\nc"})
	var texts []string
	for _, k := range keys {
		texts = append(texts, k.Text)
	}
	if !slices.Equal(texts, []string{"a", "b", "c"}) {
		t.Fatalf("paste sent %q", texts)
	}
	keys, _ = m.Update(tea.PasteMsg{Content: strings.Repeat("z", 1000)})
	if len(keys) != 256 {
		t.Fatalf("a long paste sent %d keys, want 256", len(keys))
	}
}

func TestEscAndCtrlCClose(t *testing.T) {
	for _, k := range []string{"esc", "ctrl+c"} {
		var m Model
		m.Open(todo("a"))
		keys, closing := m.Update(tuitest.Key(k))
		if keys != nil || !closing || m.IsOpen() {
			t.Errorf("%s: keys %+v, close %v, open %v; want closed and nothing sent", k, keys, closing, m.IsOpen())
		}
		if m.Closed("todo-main") {
			t.Errorf("%s: the closed notification after it found the panel still open", k)
		}
		if keys, closing := m.Update(tuitest.Key("up")); keys != nil || closing {
			t.Errorf("keys go to a closed panel")
		}
	}
}

func TestRenderAndClosed(t *testing.T) {
	var m Model
	if m.Render(todo("x")) {
		t.Fatal("render applied with no panel open")
	}
	m.Open(todo("□ one", "□ two"))
	other := todo("nope")
	other.PanelID = "other"
	if m.Render(other) {
		t.Fatal("another panel's frame applied")
	}
	f := todo("✓ one", "□ two")
	f.Title = nil
	if !m.Render(f) {
		t.Fatal("the panel's own frame not applied")
	}
	v := tuitest.Screen(m.View(40))
	if !strings.Contains(v, "✓ one") || !strings.Contains(v, "Todos (2)") {
		t.Fatalf("after render:\n%s\nwant the new lines under the kept title", v)
	}
	if m.Closed("other") || !m.IsOpen() {
		t.Fatal("another id closed the panel")
	}
	if !m.Closed("todo-main") || m.IsOpen() || m.View(40) != "" {
		t.Fatal("closed notification did not close it")
	}
}

func TestScreens(t *testing.T) {
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("□ item %d", i))
	}
	cases := []struct {
		name  string
		width int
		m     func() *Model
	}{
		{"todo", 50, func() *Model { var m Model; m.Open(todo("▸ □ ship panel api", "  ✓ persist state")); return &m }},
		{"todo-80", 80, func() *Model { var m Model; m.Open(todo("▸ □ ship panel api", "  ✓ persist state")); return &m }},
		{"no-title-ascii", 40, func() *Model {
			m := Model{ASCII: true}
			m.Open(acp.PanelFrame{PanelID: "p", Extension: "weather", Lines: []string{"Berlin  12°C  cloudy"}})
			return &m
		}},
		{"cut-and-capped", 30, func() *Model {
			m := Model{MaxLines: 5}
			f := todo(append([]string{"a line far too long to fit in thirty cells of width"}, many...)...)
			m.Open(f)
			return &m
		}},
		{"hostile", 40, func() *Model {
			var m Model
			m.Open(acp.PanelFrame{PanelID: "p", Extension: "evil", Title: ptr("\x1b]52;c;aGk=\x07T\x1b[2Jitle"),
				Lines: []string{"\x1b[31mred\x1b[0m\ttab", "bell\a and \x1b[H home"}})
			return &m
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.m().View(c.width)
			if strings.ContainsAny(tuitest.Screen(v), "\x1b\a") {
				t.Fatalf("escape left in %q", v)
			}
			tuitest.Golden(t, c.name, tuitest.Screen(v)+"\n")
		})
	}
}
