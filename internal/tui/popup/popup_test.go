package popup

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"zot.dev/zot/internal/tui/tuitest"
)

func commands() []Item {
	return []Item{
		{Name: "/help", Description: "list keys and commands"},
		{Name: "/model", Description: "switch the model (a picker)"},
		{Name: "/mode", Description: "cycle the permission mode: ask, auto-edit, yolo"},
		{Name: "/sessions", Description: "resume a session of this folder"},
		{Name: "/compact", Description: "summarise the conversation to free context"},
		{Name: "/clear", Description: "start a new session"},
		{Name: "/todos", Description: "open the todo panel", Group: "extensions"},
		{Name: "/weather", Description: "today's weather for a city", Group: "extensions"},
	}
}

func TestCommandsOpenFilterClose(t *testing.T) {
	c := NewCommands(commands())
	c.SetInput("hello")
	if c.Open() {
		t.Fatal("open for input without a slash")
	}
	c.SetInput("/")
	if !c.Open() || c.Len() != 8 {
		t.Fatalf("on \"/\": open %v with %d items, want all 8", c.Open(), c.Len())
	}
	c.SetInput("/mo")
	if it, _ := c.Selected(); c.Len() != 2 || it.Name != "/model" {
		t.Fatalf("on /mo: %d items, first %q; want /model and /mode", c.Len(), it.Name)
	}
	c.SetInput("/wthr") // characters in order
	if it, _ := c.Selected(); it.Name != "/weather" {
		t.Fatalf("on /wthr: %q", it.Name)
	}
	c.SetInput("/he") // names only: /model's "the model" is no match
	if it, _ := c.Selected(); c.Len() != 2 || it.Name != "/help" {
		t.Fatalf("on /he: %d items, first %q; want /help, then /weather", c.Len(), it.Name)
	}
	c.SetInput("/model gpt") // arguments: the popup is done
	if c.Open() {
		t.Fatal("open while arguments are typed")
	}
	c.SetInput("/zzz")
	if c.Open() {
		t.Fatal("open with no match")
	}
}

// A command typed before the extension that has it listed its commands
// opens the popup once they come.
func TestCommandsListedAfterTyping(t *testing.T) {
	c := NewCommands(commands()[:2])
	c.SetInput("/wea")
	if c.Open() {
		t.Fatal("open with no match")
	}
	c.SetItems(commands())
	if it, _ := c.Selected(); !c.Open() || it.Name != "/weather" {
		t.Fatalf("after the commands came: open %v, selected %q; want /weather", c.Open(), it.Name)
	}
	c.Close()
	c.SetItems(commands())
	if c.Open() {
		t.Fatal("a popup closed with esc opened again when the commands changed")
	}
}

func TestCommandsKeys(t *testing.T) {
	c := NewCommands(commands())
	c.SetInput("/")
	if a, _ := c.Update(tuitest.Key("down")); a != Moved {
		t.Fatalf("down: %v", a)
	}
	c.Update(tuitest.Key("down"))
	c.Update(tuitest.Key("up"))
	if a, it := c.Update(tuitest.Key("enter")); a != Choose || it.Name != "/model" {
		t.Fatalf("enter: %v %q, want choose /model", a, it.Name)
	}
	if c.Open() {
		t.Fatal("open after enter")
	}
	c.SetInput("/cl")
	if a, it := c.Update(tuitest.Key("tab")); a != Complete || it.Name != "/clear" {
		t.Fatalf("tab: %v %q", a, it.Name)
	}
	c.SetInput("/clear ")
	if c.Open() {
		t.Fatal("open after completing")
	}
	// up from the first wraps to the last.
	c.SetInput("/")
	c.Update(tuitest.Key("up"))
	if it, _ := c.Selected(); it.Name != "/weather" {
		t.Fatalf("up from the first: %q", it.Name)
	}
	// esc closes until the input changes.
	if a, _ := c.Update(tuitest.Key("esc")); a != Cancel || c.Open() {
		t.Fatalf("esc: %v, open %v", a, c.Open())
	}
	c.SetInput("/")
	if c.Open() {
		t.Fatal("reopened on the same input after esc")
	}
	c.SetInput("/h")
	if !c.Open() {
		t.Fatal("not reopened after typing")
	}
	if a, _ := c.Update(tuitest.Key("x")); a != None {
		t.Fatalf("a typed key answered %v, want none (it belongs to the input)", a)
	}
}

func TestPicker(t *testing.T) {
	var items []Item
	for i := range 30 {
		items = append(items, Item{Name: fmt.Sprintf("model-%02d", i), Description: fmt.Sprintf("%dk context", 100+i), Value: i})
	}
	p := NewPicker("Switch model", items)
	if !p.Select(func(it Item) bool { return it.Value == 12 }) {
		t.Fatal("Select found nothing")
	}
	if a, it := p.Update(tuitest.Key("enter")); a != Choose || it.Value != 12 {
		t.Fatalf("enter: %v %v", a, it.Value)
	}
	for _, m := range tuitest.Type("2") {
		p.Update(m)
	}
	if p.Len() != 12 { // 02, 12, 20-29
		t.Fatalf("filter 2 leaves %d, want 12", p.Len())
	}
	p.Update(tea.PasteMsg{Content: "7\n"})
	if it, _ := p.Selected(); p.Filter() != "27" || it.Name != "model-27" {
		t.Fatalf("after paste: filter %q, selected %q", p.Filter(), it.Name)
	}
	p.Update(tuitest.Key("ctrl+u"))
	for _, m := range tuitest.Type("context") { // a picker matches descriptions too
		p.Update(m)
	}
	if p.Len() != 30 {
		t.Fatalf("filter context leaves %d, want all 30 by their descriptions", p.Len())
	}
	p.Update(tuitest.Key("ctrl+u"))
	p.Update(tuitest.Key("2"))
	p.Update(tuitest.Key("end"))
	// Ranked: a word that starts with "2" (model-20…29) before a name that
	// holds it (model-02, model-12).
	if it, _ := p.Selected(); it.Name != "model-12" {
		t.Fatalf("end: %q", it.Name)
	}
	p.Update(tuitest.Key("ctrl+u"))
	p.Update(tuitest.Key("pgdown"))
	if it, _ := p.Selected(); it.Name != "model-10" {
		t.Fatalf("pgdown: %q", it.Name)
	}
	for _, m := range tuitest.Type("zzz") {
		p.Update(m)
	}
	if a, _ := p.Update(tuitest.Key("enter")); a == Choose {
		t.Fatal("enter with nothing matching chose")
	}
	if a, _ := p.Update(tuitest.Key("esc")); a != Cancel {
		t.Fatalf("esc: %v", a)
	}
}

func TestScreens(t *testing.T) {
	var models []Item
	for i := range 14 {
		models = append(models, Item{Name: fmt.Sprintf("claude-model-%d", i), Description: fmt.Sprintf("anthropic · %dk context · $%d/M", 200, 3+i)})
	}
	cases := []struct {
		name  string
		width int
		draw  func() string
	}{
		{"commands-all", 60, func() string { c := NewCommands(commands()); c.SetInput("/"); return c.View(60) }},
		{"commands-narrow", 30, func() string { c := NewCommands(commands()); c.SetInput("/"); return c.View(30) }},
		{"commands-filtered", 60, func() string {
			c := NewCommands(commands())
			c.SetInput("/mo")
			c.Update(tuitest.Key("down"))
			return c.View(60)
		}},
		{"commands-scrolled", 60, func() string {
			c := NewCommands(commands())
			c.Rows = 4
			c.SetInput("/")
			for range 5 {
				c.Update(tuitest.Key("down"))
			}
			return c.View(60)
		}},
		{"commands-ascii", 60, func() string {
			c := NewCommands(commands())
			c.ASCII = true
			c.SetInput("/")
			c.Update(tuitest.Key("up"))
			return c.View(60)
		}},
		{"picker", 70, func() string { return NewPicker("Switch model", models).View(70) }},
		{"picker-filtered", 70, func() string {
			p := NewPicker("Switch model", models)
			for _, m := range tuitest.Type("1") {
				p.Update(m)
			}
			p.Update(tuitest.Key("down"))
			return p.View(70)
		}},
		{"picker-empty", 70, func() string {
			p := NewPicker("Resume a session", nil)
			p.EmptyText = "no sessions in this folder"
			return p.View(70)
		}},
		{"picker-nomatch", 70, func() string {
			p := NewPicker("Switch model", models)
			for _, m := range tuitest.Type("gpt") {
				p.Update(m)
			}
			return p.View(70)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.draw()
			for i, l := range strings.Split(tuitest.Screen(v), "\n") {
				if w := len([]rune(strings.NewReplacer("⟨", "", "⟩", "").Replace(l))); w > c.width {
					t.Errorf("row %d is %d wide, over %d: %q", i, w, c.width, l)
				}
			}
			tuitest.Golden(t, c.name, tuitest.Screen(v)+"\n")
		})
	}
}
